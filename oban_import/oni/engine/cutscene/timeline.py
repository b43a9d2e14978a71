"""What a cutscene function does, tick by tick, as the scheduler found it (docs/cutscenes.md):
events in tick order, each naming what it starts. Tick 0 is the function's first tick; a
scene shows tick t at frame start + t. No bpy."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Where:
    file: str
    line: int

    def __str__(self):
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class CameraEvent:
    """`anim` plays `oban` from frame 1 on `tick`; `interpolate` eases to `oban`'s frame 0 over
    `ticks`; `reset` gives the camera back to the game."""
    tick: int
    kind: str        # "anim", "interpolate", "reset"
    oban: str = ""
    ticks: int = 0
    where: Where | None = None


@dataclass(frozen=True)
class CharacterEvent:
    """`envanim` (oban, norotation), `animate` (tram, frames: None or the count asked),
    `teleport` (flag), `playback` (film)."""
    tick: int
    character: str   # as the script names it: "0" is the player
    kind: str
    name: str
    norotation: bool = False
    frames: int | None = None
    mode: str = ""   # playback's: "", "fromhere", "interp"
    where: Where | None = None


@dataclass(frozen=True)
class ObjectEvent:
    """`anim`: the objects of script ids first..last start their OBAN (`oban` "" : their
    current one); `setanim`: they are given `oban` and start it; `create`/`kill`."""
    tick: int
    kind: str
    first: int
    last: int
    oban: str = ""
    where: Where | None = None


@dataclass(frozen=True)
class ShowEvent:
    """`env_show`: the environment quads of script id `id` shown or hidden."""
    tick: int
    id: int
    shown: bool
    where: Where | None = None


@dataclass(frozen=True)
class Marker:
    """A timeline marker: a dialogue line, a fade, the letterbox, or a statement whose effect
    cannot be known without running the game (`unknown`)."""
    tick: int
    text: str
    kind: str        # "dialogue", "screen", "unknown"
    where: Where | None = None


@dataclass
class Timeline:
    function: str
    length: int = 0                       # ticks: the last tick shown is length - 1
    camera: list = field(default_factory=list)       # CameraEvent
    characters: list = field(default_factory=list)   # CharacterEvent
    objects: list = field(default_factory=list)      # ObjectEvent
    shows: list = field(default_factory=list)        # ShowEvent
    markers: list = field(default_factory=list)      # Marker
    missing: list = field(default_factory=list)      # (tick, kind, name, Where): names the level does not hold
    ignored: dict = field(default_factory=dict)      # command -> times run that change nothing shown
    notes: list = field(default_factory=list)        # what the report says besides

    @property
    def unknown(self) -> list:
        return [m for m in self.markers if m.kind == "unknown"]
