from helpers import convert

OFFICES = {"Toronto": "America/Toronto", "Berlin": "Europe/Berlin",
           "Sydney": "Australia/Sydney", "Lagos": "Africa/Lagos"}


def verify(workspace, answer):
    # Which are open depends on daylight saving on the day; the answer must name exactly those.
    right = 0
    for office, zone in OFFICES.items():
        is_open = "09:00" <= convert("14:00", "UTC", zone) < "17:00"
        right += (office in answer) == is_open
    return right / len(OFFICES)
