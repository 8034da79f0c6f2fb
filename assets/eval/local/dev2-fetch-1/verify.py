import re


def times(text):
    """The clock times a text names, as minutes after midnight: 16:30, 16.30, 4:30 pm,
    4.30pm, 4 pm; a time before 08:00 without am or pm is read as the afternoon's."""
    found = set()
    text = text.lower()
    for hour, minute, half in re.findall(
            r"(?<![\d.:])(\d{1,2})(?:[:.h](\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?(?![\d])", text):
        if not minute and not half:
            continue  # a bare number is no time
        hour, minute = int(hour), int(minute or 0)
        if (half.startswith("p") and hour < 12) or (not half and hour < 8):
            hour += 12
        found.add(hour * 60 + minute)
    return found


def verify(workspace, answer):
    """1.0 when the answer names 16:30 and not the other days' closing times (20:00,
    18:00): Saturday's, not the whole table."""
    said = times(answer)
    return float(16 * 60 + 30 in said and not said & {20 * 60, 18 * 60})
