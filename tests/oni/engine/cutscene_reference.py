"""A deliberately plain emulator of how Oni plays a cutscene function, tick by tick
(docs/cutscenes.md, which checks the project spec CUTSCENES.md 1-5 against the engine
source; where they differ the docs are followed: `_block` commands wait for the previous
operation only, objects exist from `obj_create`, a dialogue line not found plays nothing,
a teleport keeps the facing, an ended envanim keeps its position and the old facing), to
check the scheduler
(oban_import/oni/engine/cutscene) against. Written from the spec alone, never from the
scheduler: one loop over ticks, each tick in the engine's order:

1. scripts: every context that is due runs, in the order of the engine's task slots
   (BFW_ScriptLang_Scheduler.c SLrScheduler_Update walks SLgSchedule_Tasks by index; a
   context takes the first free slot the first time it sleeps or stalls, and frees it
   when it ends); a sleeping one wakes N
   ticks later, a stalled command is retried the next tick;
2. characters: an envanim whose frame >= frames - 1 ends, then the base is built;
3. physics: every running object and envanim animation advances one frame;
4. the camera: an animation advances one frame, an interpolation one step.

The statements are the AST nodes of oban_import/oni/io/bsl/script.py, run by Python
generators (a context is a generator; it yields where it sleeps or stalls). An OBAN's
matrix at a frame is oban_import.oni.engine.frames' (tested on its own); everything
else here is written out. Matrices are Oni's 4x4, column vectors. No bpy."""

import math
from dataclasses import dataclass, field

import numpy as np

from oban_import.oni.engine.frames import frame_matrices, sample_keys
from oban_import.oni.io.bsl.script import (Assign, Binary, Call, Fork, If, Literal, Name, Return,
                                           Sleep, Unary, Var)
from oban_import.oni.io.oban.record import LOCALIZED, LOOP, PINGPONG, matrix_from_columns

MAX_FRAMES = 6                  # docs/cutscenes.md 1.7: call depth per context
MAX_TASKS = 32                  # live sleeping or stalled contexts
ROT_X_90 = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])   # y -> z
DEFAULTS = {"int": 0, "float": 0.0, "bool": False, "string": ""}


SHOWN_COMMANDS = frozenset({"cm_anim", "cm_anim_block", "cm_interpolate", "cm_interpolate_block", "cm_reset",
                            "chr_envanim", "chr_envanim_block", "chr_animate", "chr_animate_block", "chr_teleport",
                            "env_anim", "env_anim_block", "env_setanim", "env_setanim_block", "obj_create", "obj_kill",
                            "env_show"})

class Refused(Exception):
    """What the reference cannot play (a missing function, endless recursion, a tick that never ends)."""


@dataclass
class Level:
    """What the level gives the names (a dict each; a name not in it is missing)."""
    functions: dict = field(default_factory=dict)      # name -> Function
    variables: dict = field(default_factory=dict)      # name -> Var
    obans: dict = field(default_factory=dict)          # name -> Animation
    trams: dict = field(default_factory=dict)          # name -> frames
    dialogue: dict = field(default_factory=dict)       # name -> ticks (not in it: not found, nothing plays)
    characters: dict = field(default_factory=dict)     # key -> 4x4 start base T(location).R(facing).S(scale)
    flags: dict = field(default_factory=dict)          # flag name or id (str) -> 4x4
    placed: dict = field(default_factory=dict)         # script id -> [PlacedObject]


@dataclass
class Played:
    length: int
    camera: np.ndarray
    camera_held: np.ndarray
    bases: dict
    actions: dict
    objects: dict
    objects_shown: dict
    quads_shown: dict
    missing: list
    unknown: list               # (tick, command name)
    ran: list                   # (tick, command name) of every command that ran (passed)


# --- the animation clock (BFW_Physics.c PHrPhysics_Update_Animation, docs/engine.md 3) ---

class Clock:
    """One OBAN playing: frame, step, running; `advance` is one physics update."""

    def __init__(self, animation, frame=0, running=False):
        self.animation, self.frame, self.step, self.running = animation, frame, 1, running

    def start(self, frame=0):
        self.frame, self.step, self.running = frame, 1, True

    def advance(self):
        if not self.running:
            return
        frames, flags = self.animation.frames, self.animation.flags
        self.frame += self.step
        if self.frame >= frames:
            if flags & PINGPONG:
                self.frame, self.step = frames - 1, -1
            elif flags & LOOP:
                self.frame = 0
            else:
                self.frame, self.running = frames - 1, False
        if self.frame < 0:
            if flags & PINGPONG:
                self.frame, self.step = 0, 1
            else:
                self.frame, self.running = 0, False


def oban_matrix(animation, frame):
    return frame_matrices(animation, [frame])[0]


# --- camera views (Oni_Camera.c) ---

def level_up(v):
    """CArBuildUpVector: v x (v.z, 0, -v.x), normalised."""
    up = np.cross(v, [v[2], 0.0, -v[0]])
    return up / np.linalg.norm(up)


def view_of(matrix):
    """(location, view vector, up vector) of a camera matrix."""
    return matrix[:3, 3].copy(), matrix[:3, :3] @ [0.0, 0.0, -1.0], matrix[:3, :3] @ [0.0, 1.0, 0.0]


def view_matrix(location, view, up):
    """The camera matrix standing at `location`, looking down `view`, `up` up (square to it)."""
    z = -np.asarray(view, float)
    z = z / np.linalg.norm(z)
    y = np.asarray(up, float) - np.dot(up, z) * z
    y = y / np.linalg.norm(y)
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2], m[:3, 3] = np.cross(y, z), y, z, location
    return m


class Camera:
    def __init__(self):
        self.mode = None            # None (before any command), "anim", "interpolate", "game" (cm_reset), "held"
        self.busy = False
        self.view = None            # the last update's (location, view, up)
        self.matrix = None          # the last update's matrix
        self.clock = None
        self.interpolation = None   # [initial view, ending view, k, N]

    def anim(self, animation):
        self.mode, self.clock, self.busy = "anim", Clock(animation, 0, True), True

    def interpolate(self, animation, ticks):
        target = oban_matrix(animation, 0)
        location, view, _ = view_of(target)
        ending = (location, view, level_up(view))
        initial = self.view if self.view is not None else ending
        self.mode, self.busy = "interpolate", True
        self.interpolation = [initial, ending, 0, max(int(ticks), 1)]

    def update(self):
        """One camera update; True where an animation or interpolation placed the camera."""
        if self.mode == "anim":
            self.clock.advance()
            self.matrix = oban_matrix(self.clock.animation, self.clock.frame)
            self.view = view_of(self.matrix)
            self.busy = self.clock.frame < self.clock.animation.frames - 1
            return True
        if self.mode == "interpolate":
            initial, ending, k, n = self.interpolation
            k += 1
            if k >= n:
                k, self.busy = n, False
            self.interpolation[2] = k
            a = (math.sin(k / n * math.pi - math.pi / 2) + 1) / 2
            location = initial[0] + a * (ending[0] - initial[0])
            view = initial[1] + a * (ending[1] - initial[1])
            view = view / np.linalg.norm(view)
            up = level_up(view)
            self.view = (location, view, up)
            self.matrix = view_matrix(location, view, up)
            return True
        self.busy = False
        return False


# --- the script interpreter ---

class Context:
    def __init__(self, number):
        self.number = number        # creation order
        self.generator = None
        self.wake = 0
        self.slot = None
        self.done = False


class Reference:
    def __init__(self, level: Level, max_ticks=20000, max_depth=MAX_FRAMES, max_steps=20000):
        self.level = level
        self.max_ticks, self.max_depth, self.max_steps = max_ticks, max_depth, max_steps
        self.globals = {}
        for name, var in level.variables.items():
            self.globals[name] = self._constant(var)
        self.contexts, self.slots = [], []
        self.now, self.steps, self.nesting = 0, 0, 0
        self.camera = Camera()
        self.dialogue_end = 0       # the tick from which no line plays (OSgDialog_Playing false)
        self.envanims = {}          # character -> [Clock, norotation]
        self.bases = {}             # character -> its current base (4x4), None: unknown
        self.locations = {}         # character -> its location (3,), what an envanim and a teleport move
        self.base_track = {}        # character -> [4x4 per tick]
        self.character_ends = []    # the tick after each envanim's last shown tick
        self.actions = {}
        self.holds = {}             # character -> the tick its chr_animate hold is down to 1
        self.objects = {}           # (script id, setup) -> [PlacedObject, Clock or None, shown]
        self.object_track, self.shown_track = {}, {}
        self.quads, self.quad_track = {}, {}
        self.missing, self.unknown, self.ran = [], [], []
        self.camera_track, self.camera_placed = [], []
        self.last_script_tick = 0
        self.main_end = 0           # the tick the function itself ended
        self.last_shown = 0         # the last tick a command that shows something ran
        self.camera_end = 0

    # the values

    def _constant(self, var):
        if var.value is None:
            return DEFAULTS.get(var.type, 0)
        if isinstance(var.value, Literal):
            return var.value.value
        if isinstance(var.value, Unary) and var.value.op == "-" and isinstance(var.value.operand, Literal):
            return -var.value.operand.value
        raise Refused(f"global {var.name} is not a constant")

    def evaluate(self, expression, frame, depth):
        """A generator (a script function in an expression may sleep); returns the value."""
        if isinstance(expression, Literal):
            return expression.value
        if isinstance(expression, Name):
            if expression.name in frame:
                return frame[expression.name]
            if expression.name in self.globals:
                return self.globals[expression.name]
            return {"true": True, "false": False}.get(expression.name, expression.name)
        if isinstance(expression, Unary):
            value = yield from self.evaluate(expression.operand, frame, depth)
            return (not value) if expression.op == "not" else -value
        if isinstance(expression, Binary):
            left = yield from self.evaluate(expression.left, frame, depth)
            right = yield from self.evaluate(expression.right, frame, depth)
            return {"eq": lambda: left == right, "ne": lambda: left != right, "lt": lambda: left < right,
                    "le": lambda: left <= right, "gt": lambda: left > right, "ge": lambda: left >= right,
                    "and": lambda: bool(left) and bool(right), "or": lambda: bool(left) or bool(right),
                    "+": lambda: left + right, "-": lambda: left - right}[expression.op]()
        if isinstance(expression, Call):
            return (yield from self.call(expression, frame, depth))
        raise Refused(f"cannot evaluate {expression!r}")

    # the statements

    def block(self, statements, frame, depth):
        for statement in statements:
            result = yield from self.statement(statement, frame, depth)
            if result is not None:
                return result
        return None

    def statement(self, node, frame, depth):
        self.steps += 1
        if self.steps > self.max_steps:
            raise Refused(f"tick {self.now} never ends")
        if isinstance(node, Var):
            frame[node.name] = DEFAULTS.get(node.type, 0) if node.value is None else \
                (yield from self.evaluate(node.value, frame, depth))
        elif isinstance(node, Assign):
            value = yield from self.evaluate(node.value, frame, depth)
            if node.name in frame or node.name not in self.globals:
                frame[node.name] = value
            else:
                self.globals[node.name] = value
        elif isinstance(node, Sleep):
            ticks = yield from self.evaluate(node.ticks, frame, depth)
            yield max(int(ticks), 1)       # docs/cutscenes.md 1.3: sleep 0 (or less) is one tick
        elif isinstance(node, If):
            test = yield from self.evaluate(node.test, frame, depth)
            return (yield from self.block(node.then if test else node.otherwise, frame, depth))
        elif isinstance(node, Return):
            value = None if node.value is None else (yield from self.evaluate(node.value, frame, depth))
            return ("return", value)
        elif isinstance(node, Fork):
            args = []
            for arg in node.call.args:
                args.append((yield from self.evaluate(arg, frame, depth)))
            self.fork(node.call, args)
        elif isinstance(node, Call):
            yield from self.call(node, frame, depth)
        else:
            raise Refused(f"unknown statement {node!r}")
        return None

    def function_body(self, function, args, depth):
        if depth >= self.max_depth:
            raise Refused(f"{function.name}: more than {self.max_depth} nested calls")
        frame = {name: value for (_, name), value in zip(function.params, args)}
        result = yield from self.block(function.body, frame, depth + 1)
        return result[1] if result else None

    def call(self, node, frame, depth):
        args = []
        for arg in node.args:
            args.append((yield from self.evaluate(arg, frame, depth)))
        function = self.level.functions.get(node.name)
        if function is not None:
            return (yield from self.function_body(function, args, depth))
        while True:
            outcome = self.command(node.name, args)
            if outcome != "stall":
                self.ran.append((self.now, node.name))
                return outcome
            yield "stall"

    def fork(self, call, args):
        function = self.level.functions.get(call.name)
        if function is None:
            raise Refused(f"fork of {call.name}: no such function")
        self.start_context(self.function_body(function, args, 0))

    def start_context(self, generator):
        context = Context(len(self.contexts))
        context.generator = generator
        self.contexts.append(context)
        self.resume(context)

    def resume(self, context):
        """Run `context` until it sleeps, stalls or ends (now)."""
        self.last_script_tick = self.now
        self.nesting += 1
        if self.nesting > MAX_TASKS:
            raise Refused("forks without end")
        try:
            outcome = next(context.generator)
        except StopIteration:
            self.nesting -= 1
            context.done = True
            if context.slot is not None:
                self.slots[context.slot] = None
            if context.number == 0:
                self.main_end = self.now
            return
        self.nesting -= 1
        context.wake = self.now + (1 if outcome == "stall" else outcome)
        if context.slot is None:    # SLiSchedule_Add_Script: the first free slot
            free = [i for i, c in enumerate(self.slots) if c is None]
            if not free and len(self.slots) >= MAX_TASKS:
                raise Refused(f"more than {MAX_TASKS} contexts at once")
            if free:
                context.slot = free[0]
                self.slots[free[0]] = context
            else:
                context.slot = len(self.slots)
                self.slots.append(context)

    def script_phase(self):
        self.steps = 0
        i = 0
        while i < len(self.slots):      # a context added behind this one is walked this tick too
            context = self.slots[i]
            if context is not None and not context.done and context.wake <= self.now:
                self.resume(context)
            i += 1

    # the commands

    def _oban(self, name):
        animation = self.level.obans.get(name)
        if animation is None:
            self.missing.append(str(name))
        return animation

    def command(self, name, args):
        """One command; a command that shows something, run (not stalled), marks the tick: the
        cutscene lasts through it (docs/cutscenes.md 10.3)."""
        outcome = self._command(name, args)
        if outcome != "stall" and name in SHOWN_COMMANDS:
            self.last_shown = self.now
        return outcome

    def _command(self, name, args):
        """What the command does now; "stall" where it must be retried next tick."""
        camera = self.camera
        if name in ("cm_anim", "cm_anim_block"):
            if name == "cm_anim_block" and camera.busy:
                return "stall"
            animation = self._oban(args[1])
            if animation is None:
                camera.mode, camera.busy = "held", False
            else:
                camera.anim(animation)
        elif name in ("cm_interpolate", "cm_interpolate_block"):
            if name == "cm_interpolate_block" and camera.busy:
                return "stall"
            animation = self._oban(args[0])
            if animation is None:
                camera.mode, camera.busy = "held", False
            else:
                camera.interpolate(animation, args[1] if len(args) > 1 else 0)
        elif name == "cm_wait":
            if camera.busy:
                return "stall"
        elif name == "cm_reset":
            camera.mode, camera.busy = "game", False
        elif name in ("chr_envanim",):
            key = str(args[0])
            animation = self._oban(args[1])
            if animation is not None:
                self._character(key)
                self.envanims[key] = [Clock(animation, 1, True), len(args) > 2 and args[2] == "norotation"]
        elif name in ("chr_animate", "chr_animate_block"):
            # docs/cutscenes.md 3.4: TRAM frame 1 on this tick; `frames` N: a hold of N + 1
            # counted down in each character phase, so it plays to tick T + N; without it the
            # TRAM ends the tick its frame count reaches its duration (T + d - 1). The _block
            # form waits while the character's hold is > 1 (a chr_animate without frames never).
            key = str(args[0])
            if name == "chr_animate_block" and self.holds.get(key, 0) > self.now:
                return "stall"
            frames = int(args[2]) if len(args) > 2 else None
            duration = self.level.trams.get(args[1])
            if duration is None:
                self.missing.append(str(args[1]))
            if frames:
                self.holds[key] = self.now + frames
                self.character_ends.append(self.now + frames)
            else:
                self.holds.pop(key, None)
                if duration is not None:
                    self.character_ends.append(self.now + duration - 1)
            self.actions.setdefault(key, []).append((self.now, args[1], frames))
        elif name == "chr_teleport":
            # docs/cutscenes.md 3.6: the flag's position only, the facing kept; the same
            # tick's character phase builds the base
            key = str(args[0])
            self._character(key)
            self.locations[key] = np.asarray(self.level.flags[str(args[1])], float)[:3, 3].copy()
            if key not in self.envanims:
                self.bases[key] = self._standing(key)
        elif name in ("env_anim", "env_setanim", "obj_create", "obj_kill"):
            first = int(args[0])
            last = int(args[1]) if len(args) > 1 and name != "env_setanim" else first
            animation = None
            if name == "env_setanim":
                animation = self._oban(args[1])
            # docs/cutscenes.md 4.1-4.3: an OBOA object exists from its obj_create (its setup's
            # OBAN at frame 0, not playing) to its obj_kill; env_anim/env_setanim move existing ones
            for script_id in range(min(first, last), max(first, last) + 1):
                for placed in self.level.placed.get(script_id, []):
                    key = (script_id, placed.setup)
                    if key not in self.objects:
                        clock = Clock(placed.animation) if placed.animation is not None else None
                        self.objects[key] = [placed, clock, False]
                        self.object_track[key] = [self.object_matrix(key)] * self.now
                        self.shown_track[key] = [False] * self.now
                    state = self.objects[key]
                    if name == "obj_create" and not state[2]:
                        state[1] = Clock(placed.animation) if placed.animation is not None else None
                        state[2] = True
                    elif name == "obj_kill":
                        state[2] = False
                    elif not state[2]:
                        pass
                    elif name == "env_anim" and state[1] is not None:
                        state[1].start(0)
                    elif name == "env_setanim" and animation is not None:
                        state[1] = Clock(animation)
                        state[1].start(0)
        elif name == "env_show":
            script_id = int(args[0])
            if script_id not in self.quads:
                self.quad_track[script_id] = [True] * self.now
            self.quads[script_id] = bool(args[1])
        elif name in ("sound_dialog_play", "sound_dialog_play_block"):
            # docs/cutscenes.md 5: a line playing stalls the _block form (the plain one is
            # dropped); otherwise the line starts and the script goes on at once; a line the
            # level does not have plays nothing (and `_block` with no line only waits)
            if self.now < self.dialogue_end:
                return "stall" if name.endswith("_block") else None
            ticks = self.level.dialogue.get(args[0]) if args else None
            if ticks is not None:
                self.dialogue_end = self.now + int(ticks)
            elif args and str(args[0]) not in ("", "pause"):   # named in the report as missing
                self.missing.append(str(args[0]))
        elif name in ("begin_cutscene", "end_cutscene", "cutscene_sync", "fade_in", "fade_out", "letterbox"):
            pass
        else:
            self.unknown.append((self.now, name))
            return 0
        return None

    def _character(self, key):
        if key not in self.bases:
            start = self.level.characters.get(key)
            self.bases[key] = None if start is None else np.asarray(start, float)
            self.base_track[key] = [self.bases[key]] * self.now
            if start is not None:
                self.locations[key] = self.bases[key][:3, 3].copy()

    def _standing(self, key):
        """docs/cutscenes.md 3.3: T(location).RotY(facing).S(scale), the facing and scale the start's."""
        base = self.level.characters[key].copy()
        base[:3, 3] = self.locations[key]
        return base

    def _scale(self, key):
        return float(np.linalg.norm(np.asarray(self.level.characters[key], float)[:3, 0]))

    def object_matrix(self, key):
        placed, clock, _ = self.objects[key]
        origin = matrix_from_columns(placed.origin)
        if clock is None:
            return origin
        matrix = oban_matrix(clock.animation, clock.frame)
        return origin @ matrix if clock.animation.flags & LOCALIZED else matrix

    # the other phases

    def character_phase(self):
        for key, (clock, norotation) in list(self.envanims.items()):
            if clock.frame >= clock.animation.frames - 1:
                # docs/cutscenes.md 3.5: ended; the position the last frame applied, the old facing
                del self.envanims[key]
                self.character_ends.append(self.now)
                self.bases[key] = self._standing(key)
                continue
            animation = clock.animation
            if norotation:
                position, _ = sample_keys(animation, [clock.frame])
                translate = np.eye(4)
                translate[:3, 3] = position[0]
                base = translate @ matrix_from_columns(animation.base_matrix)
            else:
                base = oban_matrix(animation, clock.frame) @ ROT_X_90
            self.bases[key] = base @ np.diag([*[self._scale(key)] * 3, 1.0])
            self.locations[key] = base[:3, 3].copy()

    def physics_phase(self):
        for clock, _ in self.envanims.values():
            clock.advance()
        for _, clock, exists in self.objects.values():
            if clock is not None and exists:
                clock.advance()

    def busy(self):
        return (any(not c.done for c in self.contexts) or self.camera.busy or bool(self.envanims))

    def run(self, name) -> Played:
        function = self.level.functions.get(name)
        if function is None:
            raise Refused(f"no function {name}")
        self.now = 0
        self.steps = 0
        self.start_context(self.function_body(function, [], 0))   # in tick 0's script phase
        while True:
            self.script_phase()
            self.character_phase()
            self.physics_phase()
            was_busy = self.camera.busy
            placed = self.camera.update()
            if was_busy:
                self.camera_end = self.now + 1
            self.record(placed)
            self.now += 1
            if not self.busy():
                break
            if self.now >= self.max_ticks:
                raise Refused("the function never ends")
        length = max(self.main_end + 1, self.last_shown + 1, self.camera_end, *self.character_ends, 1)
        return self.played(length)

    def record(self, placed):
        self.camera_track.append(self.camera.matrix if placed else None)
        self.camera_placed.append(placed)
        for key in self.bases:
            self.base_track[key].append(self.bases[key])
        for key in self.objects:
            self.object_track[key].append(self.object_matrix(key))
            self.shown_track[key].append(self.objects[key][2])
        for key, shown in self.quads.items():
            self.quad_track[key].append(shown)

    def played(self, length) -> Played:
        def fill(track, n):
            track = list(track[:n])
            while len(track) < n:
                track.append(track[-1])
            return track

        # the ticks the camera holds take the last placed view before them (the first after, before any)
        placed = fill(self.camera_placed, length)
        views = fill(self.camera_track, length)
        held = np.array([not p for p in placed])
        camera = np.tile(np.eye(4), (length, 1, 1))
        known = [t for t in range(length) if placed[t]]
        for t in range(length):
            source = max([k for k in known if k <= t], default=None)
            if source is None:
                source = min(known, default=None)
            if source is not None:
                camera[t] = views[source]
        bases = {}
        for key, track in self.base_track.items():
            track = fill(track, length)
            if all(m is not None for m in track):
                bases[key] = np.array(track)
        return Played(
            length=length, camera=camera, camera_held=held, bases=bases, actions=dict(self.actions),
            objects={k: np.array(fill(v, length)) for k, v in self.object_track.items()},
            objects_shown={k: np.array(fill(v, length)) for k, v in self.shown_track.items()},
            quads_shown={k: np.array(fill(v, length)) for k, v in self.quad_track.items()},
            missing=list(dict.fromkeys(self.missing)), unknown=list(self.unknown), ran=list(self.ran))


def play(level: Level, function: str) -> Played:
    return Reference(level).run(function)
