"""CSV the console hands out, safe to open in a spreadsheet.

A cell starting with = + - @, a tab or a carriage return is run as a formula by Excel, LibreOffice and Google
Sheets; a group's title or a Telegram error is text anyone may choose, so such a cell gets a leading single
quote, which the spreadsheet shows as text (OWASP, "CSV Injection"). Numbers stay numbers.
"""

import csv

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class SpreadsheetWriter:
    """csv.writer's writerow/writerows, every text cell made safe first."""

    def __init__(self, file):
        self._writer = csv.writer(file)

    def writerow(self, row) -> None:
        self._writer.writerow([spreadsheet_cell(value) for value in row])

    def writerows(self, rows) -> None:
        for row in rows:
            self.writerow(row)
