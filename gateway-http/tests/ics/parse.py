"""Reads an ICS feed on stdin with the `icalendar` package (PyPI), a parser
nobody on the team wrote, and prints each event as JSON: its UID, summary,
how its start is given (date, floating, utc) and its value, and its alarm's
trigger in UTC."""

import json
import sys
from datetime import date, datetime

from icalendar import Calendar

calendar = Calendar.from_ical(sys.stdin.buffer.read())
events = []
for component in calendar.walk("VEVENT"):
    start = component.decoded("DTSTART")
    if isinstance(start, datetime):
        kind = "floating" if start.tzinfo is None else "utc"
        value = start.strftime("%Y-%m-%dT%H:%M")
    else:
        kind, value = "date", start.isoformat()
    alarms = [alarm.decoded("TRIGGER").strftime("%Y-%m-%dT%H:%MZ") for alarm in component.walk("VALARM")]
    events.append({"uid": str(component["UID"]), "summary": str(component["SUMMARY"]), "kind": kind, "start": value, "alarms": alarms})
print(json.dumps({"name": str(calendar.get("X-WR-CALNAME")), "events": events}))
