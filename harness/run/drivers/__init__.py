"""Load drivers: each turns a cell into a command line (pure) and its output into a typed `LoadReport`.

`registry.py` names them; `report.py` reads what they print and imports nothing that runs a tool, so reports
render without the tools.
"""
