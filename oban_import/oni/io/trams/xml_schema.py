"""OniSplit's XML of a TRAM (docs/characters.md 9), what its reader (oni/io/trams/xml_read.py) and its
writer (oni/io/trams/xml_write.py) share: OniSplit v0.9.99.2's enums by value, the file's elements in the
order its AnimationXmlReader reads them, the record field each element holds, and OniSplit's
number conversions both ways (EKey degrees and 6-byte codes, Mono's rounding, extent angles).
Facts from OniSplit's source (Oni.Totoro/, Oni.Metadata/MetaEnum.cs, Oni/MathHelper.cs).
"""

from dataclasses import dataclass

import numpy as np

from .tram import MAX_PARTS, PART_NAMES

F32 = np.float32
DEGREES, RADIANS = F32(57.295773), F32(0.017453294)   # OniSplit's MathHelper.ToDegrees, ToRadians (float32)
EKEY_SCALE = F32(32767.5)                              # degrees = int16(code) * 180 / 32767.5 (docs/characters.md 7)
MAX_FRAMES = 0xFFFF                                    # frames, and a cap on the sounds and each attack's extents
MAX_KEYS = MAX_FRAMES + 0xFFFF // 7                    # the last part's on every frame, the others' within u16 offsets


# ---- OniSplit's enums (Oni.Totoro), by value -------------------------------------------------------

class _Enum:
    """An enum read as OniSplit's MetaEnum.Parse reads it (names in any case, separated by blanks and
    OR-ed, or one number in [low, high]; an empty text is None where the enum has it) and written as
    its MetaEnum.ToString writes it ([Flags]: names in rising order, '' for None, the number where a
    bit has no name)."""

    def __init__(self, names: dict, low: int, high: int, flags=False):
        self.names = names                                  # value -> name
        self.values = {name.lower(): value for value, name in names.items()}
        self.low, self.high, self.flags = low, high, flags

    def text(self, bits: int) -> str:
        value = bits - (1 << 32) if self.low < 0 and bits >= 1 << 31 else bits   # an int enum's u32 bits
        if not self.flags:
            return self.names.get(value, str(value))
        if value == 0:
            return "" if 0 in self.names else "0"
        named = [bit for bit in self.names if bit and value & bit == bit]
        return " ".join(self.names[bit] for bit in named) if sum(named) == value else str(value)


def _sequence(names):
    return dict(enumerate(names.split()))


def _bits(names, none=True):
    return ({0: "None"} if none else {}) | {1 << bit: name for bit, name in enumerate(names.split())}


I32, U16 = (-(1 << 31), (1 << 31) - 1), (0, 0xFFFF)   # an int enum's range; a u16 field's
TYPES = _Enum(_sequence(
    "None Anything Walk Run Slide Jump Stand StandingTurnLeft StandingTurnRight RunBackwards RunSidestepLeft "
    "RunSidestepRight Kick WalkSidestepLeft WalkSidestepRight WalkBackwards Stance Crouch JumpForward "
    "JumpBackward JumpLeft JumpRight Punch Block Land Fly KickForward KickLeft KickRight KickBack KickLow "
    "PunchForward PunchLeft PunchRight PunchBack PunchLow Kick2 Kick3 Punch2 Punch3 LandForward LandRight "
    "LandLeft LandBack PPK PKK PKP KPK KPP KKP PK KP PunchHeavy KickHeavy PunchForwardHeavy KickForwardHeavy "
    "AimingOverlay HitOverlay CrouchRun CrouchWalk CrouchRunBackwards CrouchWalkBackwards CrouchRunSidestepLeft "
    "CrouchRunSidestepRight CrouchWalkSidestepLeft CrouchWalkSidestepRight RunKick RunPunch RunBackPunch "
    "RunBackKick SidestepLeftKick SidestepLeftPunch SidestepRightKick SidestepRightPunch Prone Flip HitHead "
    "HitBody HitFoot KnockdownHead KnockdownBody KnockdownFoot HitCrouch KnockdownCrouch HitFallen HitHeadBehind "
    "HitBodyBehind HitFootBehind KnockdownHeadBehind KnockdownBodyBehind KnockdownFootBehind HitCrouchBehind "
    "KnockdownCrouchBehind Idle Taunt Throw Thrown1 Thrown2 Thrown3 Thrown4 Thrown5 Thrown6 Special1 Special2 "
    "Special3 Special4 ThrowForwardPunch ThrowForwardKick ThrowBackwardPunch ThrowBackwardKick "
    "RunThrowForwardPunch RunThrowBackwardPunch RunThrowForwardKick RunThrowBackwardKick Thrown7 Thrown8 Thrown9 "
    "Thrown10 Thrown11 Thrown12 StartleLeft StartleRight Sit StandSpecial Act Kick3Fw HitFootOuch HitJewels "
    "Thrown13 Thrown14 Thrown15 Thrown16 Thrown17 PPKK PPKKK PPKKKK LandHard LandHardForward LandHardRight "
    "LandHardLeft LandHardBack LandDead CrouchTurnLeft CrouchTurnRight CrouchForward CrouchBack CrouchLeft "
    "CrouchRight GetupKickBack AutopistolRecoil PhaseRifleRecoil PhaseStreamRecoil SuperballRecoil "
    "VandegrafRecoil ScramCannonRecoil MercuryBowRecoil ScreamerRecoil PickupObject PickupPistol PickupRifle "
    "Holster DrawPistol DrawRifle Punch4 ReloadPistol ReloadPhaseRifle ReloadPhaseStream ReloadSuperball "
    "ReloadVandegraf ReloadScramCannon ReloadMercuryBow ReloadScreamer PfPf PfPfPf PlPl PlPlPl PrPr PrPrPr PbPb "
    "PbPbPb PdPd PdPdPd KfKf KfKfKf KlKl KlKlKl KrKr KrKrKr KbKb KbKbKb KdKd KdKdKd StartleLt StartleRt StartleBk "
    "StartleFw Console ConsoleWalk Stagger Watch ActNo ActYes ActTalk ActShrug ActShout ActGive RunStop WalkStop "
    "RunStart WalkStart RunBackwardsStart WalkBackwardsStart Stun StaggerBehind Blownup BlownupBehind OneStepStop "
    "RunSidestepLeftStart RunSidestepRightStart Powerup FallingFlail ConsolePunch TeleportIn TeleportOut "
    "NinjaFireball NinjaInvisible PunchRifle PickupObjectMid PickupPistolMid PickupRifleMid Hail MuroThunderbolt "
    "HitOverlayAI"), *U16)
STATES = _Enum(_sequence(   # an int in OniSplit, written as a u16: numbers past 65535 are refused
    "None Anything RunningLeftDown RunningRightDown Sliding WalkingLeftDown WalkingRightDown Standing RunStart "
    "RunAccel RunSidestepLeft RunSidestepRight RunSlide RunJump RunJumpLand RunBackStart RunningBackRightDown "
    "RunningBackLeftDown FallenBack Crouch RunningUpstairRightDown RunningUpstairLeftDown SidestepLeftLeftDown "
    "SidestepLeftRightDown SidestepRightLeftDown SidestepRightRightDown SidestepRightJump SidestepLeftJump "
    "JumpForward JumpUp RunBackSlide LieBack SsLtStart SsRtStart WalkingSidestepLeft CrouchWalk "
    "WalkingSidestepRight Flying Falling FlyingForward FallingForward FlyingBack FallingBack FlyingLeft "
    "FallingLeft FlyingRight FallingRight CrouchStart WalkingBackLeftDown WalkingBackRightDown FallenFront "
    "SidestepLeftStart SidestepRightStart Sit PunchLow StandSpecial Acting CrouchRunLeft CrouchRunRight "
    "CrouchRunBackLeft CrouchRunBackRight Blocking1 Blocking2 Blocking3 CrouchBlocking1 Gliding WatchIdle Stunned "
    "Powerup Thunderbolt"), *U16)
DIRECTIONS = _Enum(_sequence("None Forward Backward Left Right"), *U16)
BONE = _Enum(dict(enumerate(PART_NAMES)), *I32)      # a particle's part: u16 part and u16 pad as one u32
ANIMATION_FLAGS = _Enum(_bits(   # no None: OniSplit writes 0 as "0" and refuses an empty <Flags>
    "RuntimeLoaded Invulnerable BlockHigh BlockLow Attack DropWeapon InAir Atomic NoTurn AttackForward AttackLeft "
    "AttackRight AttackBackward Overlay DontInterpolateVelocity ThrowSource ThrowTarget RealWorld DoAim DontAim "
    "CanPickup Aim360 DisableShield NoAIPickup", none=False), *I32, flags=True)
VARIENTS = _Enum({0: "None", 0x100: "Sprint", 0x200: "Combat", 0x800: "RightPistol", 0x1000: "LeftPistol",
                  0x2000: "RightRifle", 0x4000: "LeftRifle", 0x8000: "Panic"}, *U16, flags=True)
ATTACK_FLAGS = _Enum(_bits("Unblockable High Low HalfDamage"), *I32, flags=True)
BONE_MASK = _Enum(_bits(" ".join(PART_NAMES)), 0, 0xFFFFFFFF, flags=True)
FOOTSTEP_TYPES = _Enum(_bits("Left Right"), *U16, flags=True)


# ---- the file's structure, in OniSplit's order ---------------------------------------------------------

OPTIONAL = "optional"


@dataclass(frozen=True)
class Leaf:
    kind: str            # how its text is read (tram_xml_read's read_<kind>) and written (tram_xml_write's _leaf_text)
    arg: object = None   # (low, high), a count of numbers, an _Enum, a byte limit


@dataclass(frozen=True)
class Group:
    children: tuple               # (name, spec, optional) in the order OniSplit reads them
    may_be_empty: bool = False    # an empty element stands for none (<ThrowSource />)


@dataclass(frozen=True)
class Items:
    names: tuple         # the items' element names
    spec: object
    limit: int           # at most this many: what OniSplit can write (u8 counts), or a cap
    packed: int = 0      # numbers per item, kept in one flat array


def _group(*children, may_be_empty=False):
    """children: (name, spec) or (name, spec, OPTIONAL)."""
    return Group(tuple((child[0], child[1], OPTIONAL in child[2:]) for child in children), may_be_empty)


def _whole(low, high):
    return Leaf("whole", (low, high))


BYTE, WORD, SHORT = _whole(0, 0xFF), _whole(*U16), _whole(-0x8000, 0x7FFF)   # WriteByte, WriteUInt16, WriteInt16
SINGLE, YES_NO = Leaf("single"), Leaf("yes_no")
HEIGHTS = Items(("Height",), Leaf("floats", 1), MAX_FRAMES, packed=1)
VELOCITIES = Items(("Velocity",), Leaf("floats", 2), MAX_FRAMES, packed=2)
BONE_KEYS = Items(("EKey", "QKey"), Leaf("key"), MAX_FRAMES, packed=6)   # duration, 3 or 4 numbers, is QKey
ROTATIONS = Items(("Bone",), BONE_KEYS, MAX_PARTS)
POSITIONS = Items(("Position",), _group(("Height", SINGLE), ("YOffset", SINGLE)), MAX_FRAMES)
LINKS = Items(("Link",), Leaf("name"), 2)
RING = Items(("Length",), Leaf("floats", 1), 36, packed=1)
SHORTCUT = _group(("FromState", Leaf("enum", STATES)), ("Length", WORD), ("ReplaceAtomic", YES_NO))
PARTICLE = _group(("Start", WORD), ("End", WORD), ("Bone", Leaf("enum", BONE)), ("Name", Leaf("name", 16)))
MOTION_BLUR = _group(("Bones", Leaf("enum", BONE_MASK)), ("Start", WORD), ("End", WORD), ("Lifetime", BYTE),
                     ("Alpha", BYTE), ("Interval", BYTE))
FOOTSTEP = _group(("Frame", WORD), ("Type", Leaf("enum", FOOTSTEP_TYPES)))
SOUND = _group(("Name", Leaf("name", 32)), ("Start", WORD))
DAMAGE = _group(("Points", WORD), ("Frame", WORD))
THROW = _group(("TargetAdjustment", _group(("Position", Leaf("floats", 3)), ("Angle", SINGLE))),
               ("Distance", SINGLE), ("TargetType", Leaf("enum", TYPES)), may_be_empty=True)
EXTENT = _group(("Angle", SINGLE), ("Length", SINGLE), ("MinY", SINGLE), ("MaxY", SINGLE))
ATTACK = _group(("Start", SHORT), ("End", SHORT), ("Bones", Leaf("enum", BONE_MASK)),
                ("Flags", Leaf("enum", ATTACK_FLAGS)), ("Knockback", SINGLE), ("HitPoints", SHORT),
                ("HitType", Leaf("enum", TYPES)), ("HitLength", SHORT), ("StunLength", SHORT),
                ("StaggerLength", SHORT), ("Extents", Items(("Extent",), EXTENT, MAX_FRAMES), OPTIONAL))
ANIMATION = _group(
    ("Lookup", _group(("Type", Leaf("enum", TYPES)), ("AimingType", Leaf("enum", TYPES)),
                      ("FromState", Leaf("enum", STATES)), ("ToState", Leaf("enum", STATES)),
                      ("Varient", Leaf("enum", VARIENTS)), ("FirstLevel", WORD),
                      ("Shortcuts", Items(("Shortcut",), SHORTCUT, 0xFF)))),
    ("Flags", Leaf("enum", ANIMATION_FLAGS)),
    ("Atomic", _group(("Start", WORD), ("End", WORD))),
    ("Invulnerable", _group(("Start", BYTE), ("End", BYTE))),
    ("Overlay", _group(("UsedBones", Leaf("enum", BONE_MASK)), ("ReplacedBones", Leaf("enum", BONE_MASK)))),
    ("DirectAnimations", LINKS),
    ("Pause", _group(("Hard", WORD), ("Soft", WORD))),
    ("Interpolation", _group(("End", WORD), ("Max", WORD))),
    ("FinalRotation", SINGLE), ("Direction", Leaf("enum", DIRECTIONS)), ("Vocalization", WORD),
    ("ActionFrame", WORD), ("Impact", Leaf("name", 16)),
    ("Particles", Items(("Particle",), PARTICLE, 0xFF)),
    ("MotionBlur", Items(("MotionBlur",), MOTION_BLUR, 0xFF)),
    ("Footsteps", Items(("Footstep",), FOOTSTEP, 0xFF)),
    ("Sounds", Items(("Sound",), SOUND, MAX_FRAMES)),
    ("Heights", HEIGHTS), ("Velocities", VELOCITIES), ("Rotations", ROTATIONS),
    ("PositionOffset", _group(("X", SINGLE), ("Z", SINGLE)), OPTIONAL), ("Positions", POSITIONS),
    ("ThrowSource", THROW, OPTIONAL),
    ("SelfDamage", Items(("Damage",), DAMAGE, 0xFF)),
    ("Attacks", Items(("Attack",), ATTACK, 0xFF), OPTIONAL),
    ("AttackRing", RING, OPTIONAL))
ALIASES = {"HorizontalExtents": "AttackRing"}   # the ring's older name, which OniSplit also reads
# record field: XML element, for the event arrays (a particle's Bone is its part and pad)
ATTACK_FIELDS = {"parts": "Bones", "knockback": "Knockback", "flags": "Flags", "damage": "HitPoints",
                 "first_frame": "Start", "last_frame": "End", "hit_type": "HitType", "hit_stun": "HitLength",
                 "block_stun": "StunLength", "stagger": "StaggerLength"}
DAMAGE_FIELDS = {"damage": "Points", "frame": "Frame"}
BLUR_FIELDS = {"parts": "Bones", "first_frame": "Start", "last_frame": "End", "quantity": "Lifetime",
               "amount": "Alpha", "skip": "Interval"}
SHORTCUT_FIELDS = {"state": "FromState", "length": "Length", "flags": "ReplaceAtomic"}
FOOTSTEP_FIELDS = {"frame": "Frame", "type": "Type"}
PARTICLE_FIELDS = {"first_frame": "Start", "last_frame": "End", "name": "Name"}
SOUND_FIELDS = {"name": "Name", "frame": "Start"}


# ---- OniSplit's numbers, both ways ------------------------------------------------------------------

def ekey_degrees(codes) -> np.ndarray:
    """EKey angles (float32 degrees) of 6-byte codes as OniSplit reads them: int16(code) * 180 / 32767.5
    in float32 (docs/characters.md 7)."""
    return np.asarray(codes, np.uint16).astype(np.int16).astype(np.float32) * F32(180) / EKEY_SCALE


def ekey_codes(degrees) -> np.ndarray:
    """6-byte codes of EKey angles as OniSplit writes them: degrees / 180 * 32767.5 in float32, rounded
    half to even, kept to 16 bits; the inverse of ekey_degrees for all 65536 codes."""
    return rounded(np.asarray(degrees, np.float32) / F32(180) * EKEY_SCALE, np.uint16)


def extent_angle_codes(degrees):
    """An extent's angle code from degrees, as OniSplit writes it: degrees * 65535 / 360, rounded."""
    return rounded(degrees * F32(65535) / F32(360), np.uint16)


def signed16(value):
    """A u16 field's value as the int16 of the same bits."""
    return value - 0x10000 if value >= 0x8000 else value


def rounded(values, dtype):
    """Mono's (short) or (ushort)Math.Round(value) of float32 values: half to even, then the low 16 bits
    of the int32 (x86's 0x80000000 where the value does not fit one)."""
    whole = np.rint(np.asarray(values, np.float64))
    whole = np.where(np.abs(whole) < 2.0 ** 31, whole, -2.0 ** 31)
    return (whole.astype(np.int64) & 0xFFFF).astype(dtype)


def round2(value):
    """OniSplit's FMath.Round(value, 2): (float)Math.Round((double)value, 2), half to even."""
    return F32(np.rint(np.float64(value) * 100) / 100)
