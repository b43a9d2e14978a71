"""What a level's script plays on (docs/stage.md): the data classes the stage readers give.
Every number is as stored (Oni axes, float32, flags bit for bit), checked by the readers."""

from dataclasses import dataclass, field

import numpy as np

# Tags as descriptors store them (reversed), beside container.py's: the script's own templates.
AISA_TAG, FILM_TAG, OSBD_TAG, SNDD_TAG = b"ASIA", b"MLIF", b"DBSO", b"DDNS"
TICKS_PER_SECOND = 60
IS_PLAYER, NOT_INITIALLY_PRESENT = 0x1, 0x4   # CHAR flags (level_rebuild/object_xml.CHARACTER_FLAGS)


@dataclass
class Character:
    """A CHAR object of the level's object lists: where a character stands at level start."""
    object_id: int
    position: np.ndarray      # (3,) float32
    rotation: np.ndarray      # (3,) float32 degrees as stored (x, y, z)
    flags: int                # CHAR flags: IsPlayer 0x1, NotInitiallyPresent 0x4, ...
    class_name: str           # the ONCC's name without 'ONCC'
    name: str
    weapon: str
    team: int
    spawn_script: str         # the function the engine calls when it creates the character

    @property
    def is_player(self) -> bool:
        return bool(self.flags & IS_PLAYER)

    @property
    def present_at_start(self) -> bool:
        return not self.flags & NOT_INITIALLY_PRESENT

    @property
    def facing(self) -> float:
        """Radians about Oni's up axis (y): the stored y rotation (docs/stage.md 1)."""
        return float(np.radians(self.rotation[1]))


@dataclass
class ScriptCharacter:
    """An AISA entry: a character `chr_create SCRIPT_ID` makes at its flag."""
    name: str
    script_id: int
    flag_id: int
    flags: int                # AISA flags: AI 0x1, AutoFreeze 0x2, Neutral 0x4, TurnGuard 0x8
    team: int
    class_name: str           # '' for link 0 (the engine takes the first character class)
    weapon: str
    ammo: int
    spawn_script: str


@dataclass
class Flag:
    """A FLAG object: a place the script names by its id (chr_teleport CHAR FLAG)."""
    object_id: int
    flag_id: int
    position: np.ndarray      # (3,) float32
    rotation: np.ndarray      # (3,) float32 degrees as stored
    note: str

    @property
    def facing(self) -> float:
        """Radians about y: the stored y rotation (docs/stage.md 2)."""
        return float(np.radians(self.rotation[1]))


@dataclass
class Film:
    """A FILM: a recording `playback CHAR FILM` plays back."""
    name: str                 # without 'FILM'
    position: np.ndarray      # (3,) float32: where the character is put
    facing: float             # radians
    desired_facing: float
    head_facing: float
    head_pitch: float
    frame_count: int
    animations: tuple         # (str, str): the two TRAMs' names without 'TRAM' ('' for link 0)
    frames: np.ndarray        # (k,) FRAME_DTYPE: mouse delta, keys, frame


@dataclass
class DialogSound:
    """What `sound_dialog_play NAME` plays: the impulse sound NAME.imp, its group and the
    group's permutations (their sound data, when found), and how long it lasts."""
    name: str
    group: str                # the OSGr's name without '.grp'
    permutations: tuple       # SoundData | None per permutation, in order
    ticks: int                # the first found permutation's stored duration (docs/stage.md 4); 0 for none


@dataclass
class SoundData:
    """A SNDD: its sample format and stored length."""
    name: str                 # without 'SNDD' ('cut_line1.aif')
    channels: int
    sample_rate: int
    data_size: int            # bytes of sample data
    duration_ticks: int       # as stored: 1/60 s

    @property
    def seconds(self) -> float:
        return self.duration_ticks / TICKS_PER_SECOND


@dataclass
class Stage:
    """Everything of a level a cutscene script names, besides its animations and placed
    objects (oban/ and objects/ read those)."""
    level: str                                   # the ONLV's name
    characters: list = field(default_factory=list)          # [Character] in list order
    script_characters: list = field(default_factory=list)   # [ScriptCharacter] (AISA order)
    flags: list = field(default_factory=list)               # [Flag] in list order
    films: dict = field(default_factory=dict)               # name -> Film
    object_script_ids: dict = field(default_factory=dict)   # OBOA script id -> setup index (the first)
    script_quads: dict = field(default_factory=dict)        # AKEV script id -> (k,) int32 quad indices
    quad_flags: dict = field(default_factory=dict)          # AKEV script id -> (k,) uint32 those quads' flags
    sounds: dict = field(default_factory=dict)              # name -> DialogSound (read.py: which are read)
    warnings: list = field(default_factory=list)

    def character(self, name: str) -> Character | None:
        return next((c for c in self.characters if c.name == name), None)

    @property
    def player(self) -> Character | None:
        return next((c for c in self.characters if c.is_player), None)

    def flag(self, flag_id: int) -> Flag | None:
        return next((f for f in self.flags if f.flag_id == flag_id), None)

    def script_character(self, script_id: int) -> ScriptCharacter | None:
        return next((c for c in self.script_characters if c.script_id == script_id), None)

    def dialog(self, name: str) -> DialogSound | None:
        """The dialogue sound `name` (its impulse NAME.imp); None where it was not found."""
        return self.sounds.get(name)

    def dialog_ticks(self, name: str) -> int:
        """How many ticks `sound_dialog_play_block NAME` waits: the sound's stored duration, 0
        where it is not found."""
        sound = self.dialog(name)
        return 0 if sound is None else sound.ticks
