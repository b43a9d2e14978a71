"""Outpost 2 sprite animations: op2_art.prt and op2_art.bmp (docs/outpost2.md). No bpy here."""
