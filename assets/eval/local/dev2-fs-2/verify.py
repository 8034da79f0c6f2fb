ORIGINAL = [
    "# Static table lookup for hostnames.",
    "# See hosts(5) for details.",
    "127.0.0.1       localhost",
    "::1             localhost ip6-localhost ip6-loopback",
    "192.168.1.10    nas.local nas",
    "192.168.1.25    pihole.local",
]


def _entries(lines):
    """(address, hostnames) of each line that is not blank or a comment."""
    out = []
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if fields:
            out.append((fields[0], fields[1:]))
    return out


def verify(workspace, answer):
    """Nothing without exactly one entry naming printer.local, with the address
    192.168.1.40; with it, half, and the other half for the original lines all still
    there, in their order (any spacing)."""
    path = workspace / "hosts"
    if not path.is_file():
        return 0.0
    lines = path.read_text().splitlines()
    printer = [address for address, names in _entries(lines) if "printer.local" in names]
    kept = [" ".join(line.split()) for line in lines]
    wanted = [" ".join(line.split()) for line in ORIGINAL]
    position = 0
    for line in kept:
        if position < len(wanted) and line == wanted[position]:
            position += 1
    if printer != ["192.168.1.40"]:
        return 0.0
    return 0.5 + 0.5 * (position == len(wanted))
