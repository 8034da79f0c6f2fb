import re

# In GiB: backups 4.2, vm-images 2.7, media 1.5, home 1.1; logs is 980M (0.96G), www 312M,
# and the rest are K. Together 4.2 + 2.7 + 1.5 + 1.1 = 9.5G. The last line, "11G total", is
# du's grand total (-c), no folder. Slips: "total" taken for a folder (20.5), 980M read as
# more than 1.1G or logs counted (10.5, 10.46), every folder added up (10.8, 10.76).
BIG = ["backups", "vm-images", "media", "home"]
NAMES = ["backups", "config", "home", "logs", "lost+found", "media", "scripts", "vm-images",
         "www", "total"]
TOGETHER = 9.5
WRONG = {20.5, 10.5, 10.46, 10.48, 10.8, 10.76}


def _folders(path):
    """The folder each line names, in order (a line naming none is skipped; naming two,
    None)."""
    found = []
    for line in path.read_text().lower().splitlines():
        named = [name for name in NAMES
                 if re.search(rf"(?<![\w+-]){re.escape(name)}(?![\w+-])", line)]
        if len(named) > 1:
            return None
        found += named
    return found


def verify(workspace, answer):
    """Half for big-folders.txt naming exactly the four folders over 1G (as /srv/name or
    name); a quarter more for their order, largest first; a quarter for 9.5 (GB, G, GiB) in
    the answer and no total a slip gives."""
    path = workspace / "big-folders.txt"
    folders = _folders(path) if path.is_file() else None
    listed = folders is not None and sorted(folders) == sorted(BIG)
    text = re.sub(r"(?<=\d),(?=\d{1,2}\b)", ".", answer)  # a decimal comma
    numbers = {round(float(n), 2) for n in re.findall(r"(?<![\d.])\d+(?:\.\d+)?", text)}
    told = TOGETHER in numbers and not numbers & WRONG
    return 0.5 * listed + 0.25 * (listed and folders == BIG) + 0.25 * told
