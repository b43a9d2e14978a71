"""What a character armature holds (docs/characters.md, "In Blender"): the names of its custom
properties, written by the character import and read by the TRAM and body exports, the OBAN export
(which leaves character armatures to it) and the panel. Plain names, no bpy."""

CHARACTER = "oni_character"              # the character's name
BODY = "oni_body"                        # the body's name (TRBS without 'TRBS')
PARTS = "oni_parts"                      # the part names, in part order
TRANSLATIONS = "oni_part_translations"   # TRTA, 3 floats a part, Oni units
PARENTS = "oni_part_parents"             # TRIA, each part's parent (-1: the root)
ACTIONS = "oni_actions"                  # the actions an import made for it (its TRAMs), by reference
BODY_FILE = "oni_body_file"              # the file holding the TRBS an import read (absolute)
BODY_INSTANCE = "oni_body_instance"      # ... and its descriptor index there
CHARACTER_FILE = "oni_character_file"    # the file holding the ONCC an import read ("" for a bare body)
CHARACTER_INSTANCE = "oni_character_instance"   # ... and its descriptor index there
