import re

MOBILE = "15155502963"  # +49 151 5550 2963 without the country code
OTHERS = ("3055504412", "16055501187", "17155503820")  # her work line, the other Lena's
# and Mats Berg's mobiles


def verify(workspace, answer):
    """1.0 when the answer gives Lena Berg's mobile (any spacing, with or without +49 or a
    leading 0) and none of the other numbers a slip would give."""
    digits = re.sub(r"\D", "", answer)
    return float(MOBILE in digits and not any(other in digits for other in OTHERS))
