"""The function a cutscene export writes (docs/cutscenes.md 11.2): statements by tick, laid
out in tick order with a sleep between, the camera given back (cm_reset) after the last tick.
No bpy."""

import re
from dataclasses import dataclass, field

from ...engine.cutscene.commands import COMMANDS, GAME_MOVES, STALLS, WAITS_ON_GAME

DIALOGUE_MARKER = re.compile(r"dialogue (\S+) \(\d+ ticks\)$")   # the import's marker of a line it played
# What runs before what on one tick: what shows first, then the camera, the characters, their
# TRAMs, the objects' animations, the markers' statements
ORDER = {"show": -1, "camera": 0, "base": 1, "tram": 2, "object": 3, "marker": 4}


@dataclass
class Script:
    name: str
    lines: list = field(default_factory=list)   # (tick, order, text)

    def at(self, tick, text, kind):
        self.lines.append((int(tick), ORDER[kind], text))

    def text(self, length) -> str:
        out, now = [f"# {self.name}: written by oban_import from a Blender scene, {length} ticks",
                    f"func void {self.name}(void)", "{"], 0
        for tick, _, text in sorted(self.lines, key=lambda line: line[:2]):
            if tick > now:
                out.append(f"\tsleep {tick - now}")
                now = tick
            out.append(f"\t{text}")
        out += [f"\tsleep {length - now}", "\tcm_reset", "}", ""]   # the camera given back after the last tick
        return "\n".join(out)


def word(text) -> str:
    """`text` as one word of a script: letters, digits and '_'."""
    return re.sub(r"\W", "_", text)


def marker_statement(text, played=frozenset()) -> str | None:
    """The statement a timeline marker stands for, or None: the import's dialogue marker is the
    line played (sound_dialog_play); a marker that reads as a call (`command arg ...`) of a
    command the scheduler knows, or one the cutscene played (`played`: the texts of its
    statements the import marked), is that call."""
    dialogue = DIALOGUE_MARKER.match(text)
    if dialogue:
        return f"sound_dialog_play {dialogue.group(1)}"
    words = text.split()
    if not words or not all(re.fullmatch(r"[\w.\-]+|\"[^\"]*\"", w) for w in words):
        return None
    known = words[0] in COMMANDS or words[0] in STALLS or words[0] in WAITS_ON_GAME or \
        words[0].startswith(GAME_MOVES)
    return text if known or text in played else None
