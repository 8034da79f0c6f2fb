from datetime import datetime, timedelta
from zoneinfo import ZoneInfo


def verify(workspace, answer):
    now = datetime.now(ZoneInfo("Pacific/Auckland"))
    # the run took a while: either day is right if midnight passed meanwhile
    days = {now.strftime("%A"), (now - timedelta(minutes=30)).strftime("%A")}
    return float(any(day.lower() in answer.lower() for day in days))
