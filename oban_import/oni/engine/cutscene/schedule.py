"""The engine's script scheduler for one function (docs/cutscenes.md 1): contexts run in
order in each tick's script phase, a sleep wakes N ticks later, a stalling command is
retried until it passes, a called function runs inline and `fork` runs one beside. Runs
from event to event (the ticks where a context wakes), never tick by tick. No bpy."""

from dataclasses import dataclass, field

from ....core.errors import ObanError
from ...io.bsl.script import Assign, Binary, Call, Fork, Function, If, Literal, Name, Return, Sleep, Unary, Var
from . import commands
from .timeline import Marker, Timeline, Where

MAX_TICKS = 60 * 60 * 60        # an hour: a function still running then is cut there (said)
MAX_STEPS_IN_TICK = 100_000     # statements one tick may run before the function "never sleeps"
MAX_DEPTH = 6                   # frames a context holds: the engine refuses a seventh call (docs/cutscenes.md 1.7)
MAX_TASKS = 32                  # contexts alive at once, as the engine's scheduler holds them (1.7)
DEFAULTS = {"int": 0, "float": 0.0, "bool": False, "string": ""}


@dataclass(frozen=True)
class Names:
    """What the scripts' names mean in the level: the functions and globals of every script,
    and the lengths of what they play (None: not found)."""
    functions: dict                       # name -> Function
    variables: dict                       # name -> Var (the scripts' globals)
    oban_frames: object = lambda name: None     # name -> frames
    tram_frames: object = lambda name: None
    dialogue_ticks: object = lambda name: None  # name -> ticks the line lasts
    object_frames: object = lambda script_id: None   # script id -> frames of its placed objects' OBAN
    film_frames: object = lambda name: None     # a film's name -> its length in ticks


@dataclass
class _Frame:
    function: Function
    statements: tuple
    pc: int = 0
    locals: dict = field(default_factory=dict)


@dataclass
class _Context:
    frames: list
    wake: int = 0
    stall: object = None          # the Call retried until it passes
    for_value: bool = False       # a function run for its return value: it may not wait
    result: object = 0
    slot: int | None = None       # its task slot, taken when it first sleeps or stalls (docs/cutscenes.md 1.7)


class Stop(Exception):
    """A context gives the tick up: it sleeps or stalls."""


def schedule(names: Names, function: str, max_ticks: int = MAX_TICKS) -> Timeline:
    """The timeline of `function` as the engine plays it from tick 0."""
    if function not in names.functions:
        known = ", ".join(sorted(names.functions)[:12]) or "none"
        raise ObanError(function, f"no script function of that name (functions found: {known})")
    return _Scheduler(names, max_ticks).run(names.functions[function])


class _Scheduler:
    def __init__(self, names, max_ticks):
        self.names, self.max_ticks = names, max_ticks
        self.globals = {}
        self.now = 0
        self.steps = 0
        self.state = commands.State(names=names)

    def run(self, function):
        self.timeline = Timeline(function.name)
        self.state.timeline = self.timeline
        for var in self.names.variables.values():
            self.globals[var.name] = DEFAULTS.get(var.type, 0) if var.value is None else self._value(var.value, {})
        main = _Context([_Frame(function, function.body)])
        self.contexts, ended = [main], None
        while self.contexts:
            self.now = min(c.wake for c in self.contexts)
            if self.now >= self.max_ticks:
                self.timeline.notes.append(f"still running at tick {self.max_ticks} (an hour): cut there")
                self.now = self.max_ticks
                break
            self.steps = 0
            for context in sorted(self.contexts, key=_slot_order):   # the engine's task slots (docs 1.7)
                if context.wake <= self.now or context.stall is not None and self._passes(context) <= self.now:
                    self._resume(context)
            self.contexts = [c for c in self.contexts if c.frames]
            if ended is None and not main.frames:
                ended = self.now
            for context in self.contexts:   # a stall passes as soon as what it waits on is free
                if context.stall is not None:
                    context.wake = max(self.now + 1, self._passes(context))
        ended = self.now if ended is None else ended
        self.timeline.length = _length(self.timeline, ended, self.state.end(ended))
        return self.timeline

    def _passes(self, context):
        return self.state.passes(context.stall, self.now, self._arguments(context.stall, context))

    def _stopped(self, context):
        """A context that sleeps or stalls for the first time takes the first free task slot."""
        if context.slot is None:
            taken = {c.slot for c in self.contexts if c.frames}
            context.slot = next(slot for slot in range(len(taken) + 1) if slot not in taken)

    # -- contexts

    def _resume(self, context):
        if context.stall is not None:
            if self._passes(context) > self.now:
                return
            call, context.stall = context.stall, None
            self.state.start(call, self.now, self._arguments(call, context), self._where(context, call.line))
        self._run(context)

    def _run(self, context):
        try:
            self._go(context)
        except Stop:
            self._stopped(context)

    def _go(self, context):
        """Runs `context` until it sleeps, stalls (Stop) or ends."""
        while context.frames:
            frame = context.frames[-1]
            if frame.pc >= len(frame.statements):
                context.frames.pop()
                continue
            statement = frame.statements[frame.pc]
            frame.pc += 1
            self.steps += 1
            if self.steps > MAX_STEPS_IN_TICK:
                raise ObanError(frame.function.file, f"line {statement.line}: {frame.function.name} never sleeps: "
                                f"{MAX_STEPS_IN_TICK} statements ran on tick {self.now}")
            self._statement(context, frame, statement)

    def _statement(self, context, frame, statement):
        if context.for_value and (isinstance(statement, (Sleep, Fork)) or
                                  isinstance(statement, Call) and self.state.stalls(statement.name)):
            raise ObanError(frame.function.file, f"line {statement.line}: {frame.function.name} is used as a value "
                            "but waits")
        if isinstance(statement, Sleep):
            ticks = self._value(statement.ticks, frame.locals)
            context.wake = self.now + max(int(self._number(ticks)), 1)   # sleep 0: a tick (1.3)
            raise Stop
        if isinstance(statement, Call):
            self._call(context, frame, statement)
        elif isinstance(statement, Fork):
            self._fork(context, frame, statement)
        elif isinstance(statement, Var):
            frame.locals[statement.name] = (DEFAULTS.get(statement.type, 0) if statement.value is None
                                            else self._value(statement.value, frame.locals))
        elif isinstance(statement, Assign):
            scope = frame.locals if statement.name in frame.locals else self.globals
            scope[statement.name] = self._value(statement.value, frame.locals)
        elif isinstance(statement, If):
            taken = statement.then if self._truth(self._value(statement.test, frame.locals)) \
                else statement.otherwise
            context.frames.append(_Frame(frame.function, taken, locals=frame.locals))
            if len(context.frames) > MAX_DEPTH * 8:
                raise ObanError(frame.function.file, f"line {statement.line}: blocks nested too deep")
        elif isinstance(statement, Return):
            context.result = 0 if statement.value is None else self._value(statement.value, frame.locals)
            while context.frames and context.frames[-1].locals is frame.locals:
                context.frames.pop()
        else:
            raise ObanError(frame.function.file, f"line {statement.line}: a statement the scheduler does not know")

    def _call(self, context, frame, call):
        function = self.names.functions.get(call.name)
        if function is not None:
            context.frames.append(self._entered(context, frame, function, call))
            return
        arguments = self._arguments(call, context)
        where = self._where(context, call.line)
        if self.state.stalls(call.name):
            passes = self.state.passes(call, self.now, arguments)
            if passes > self.now:
                context.stall, context.wake = call, passes
                raise Stop
        sleep = self.state.start(call, self.now, arguments, where)
        if sleep > 0:
            context.wake = self.now + sleep
            raise Stop

    def _fork(self, context, frame, fork):
        function = self.names.functions.get(fork.call.name)
        if function is None:   # a command forked runs once and never waits (docs/cutscenes.md 1.6)
            self.state.start(fork.call, self.now, self._arguments(fork.call, context),
                             self._where(context, fork.call.line))
            return
        if len(self.contexts) >= MAX_TASKS:
            raise ObanError(frame.function.file, f"line {fork.line}: more than the engine's {MAX_TASKS} scripts "
                            "running at once")
        child = _Context([], wake=self.now)
        child.frames.append(self._entered(child, frame, function, fork.call))
        self.contexts.append(child)
        self._run(child)

    def _entered(self, context, frame, function, call):
        depth = sum(1 for f in context.frames if f.statements is f.function.body) + 1
        if depth > MAX_DEPTH:
            chain = " > ".join(f.function.name for f in context.frames if f.statements is f.function.body)
            raise ObanError(function.file, f"line {call.line}: calls nested deeper than the engine's {MAX_DEPTH} "
                            f"(a recursion?): {chain[-300:]} > {function.name}")
        values = [self._value(a, frame.locals) for a in call.args]
        if len(values) > len(function.params):
            raise ObanError(frame.function.file, f"line {call.line}: {function.name} takes {len(function.params)} "
                            f"arguments, given {len(values)}")
        local = {name: DEFAULTS.get(kind, 0) for kind, name in function.params}
        local.update({name: value for (_, name), value in zip(function.params, values)})
        return _Frame(function, function.body, locals=local)

    # -- values

    def _arguments(self, call, context):
        """A command's arguments: a bare word that names no variable is the word itself."""
        local = context.frames[-1].locals if context.frames else {}
        return [self._value(a, local, word=True) for a in call.args]

    def _where(self, context, line):
        file = context.frames[-1].function.file if context.frames else ""
        return Where(file, line)

    def _value(self, expression, local, word=False):
        if isinstance(expression, Literal):
            return expression.value
        if isinstance(expression, Name):
            return self._name(expression, local, word)
        if isinstance(expression, Unary):
            value = self._value(expression.operand, local)
            return (not self._truth(value)) if expression.op == "not" else -self._number(value)
        if isinstance(expression, Binary):
            left = self._value(expression.left, local)
            right = self._value(expression.right, local)
            if expression.op in ("eq", "ne", "and", "or"):
                return _binary(expression.op, left, right)
            return _binary(expression.op, self._number(left), self._number(right))
        if isinstance(expression, Call):
            return self._value_of_call(expression, local)
        raise TypeError(expression)

    def _name(self, name, local, word):
        """A variable's value; in an expression, a script function's value (the engine calls a
        bare function name) or else a variable of the game's: unknowable, taken as 0 and listed."""
        if name.name in local:
            return local[name.name]
        if name.name in self.globals:
            return self.globals[name.name]
        if word:
            return name.name
        if name.name in self.names.functions:
            return self._value_of_call(Call(name.name, (), name.line), local)
        self.timeline.markers.append(Marker(self.now, f"{name.name} (a game variable) taken as 0", "unknown"))
        return 0

    def _number(self, value):
        """`value` as a number; a word that is none, 0 (listed)."""
        try:
            return _as_number(value)
        except ValueError:
            self.timeline.markers.append(Marker(self.now, f"{value!r} is not a number: taken as 0", "unknown"))
            return 0

    def _value_of_call(self, call, local):
        """A script function's return value (it may not sleep), or a game query's: unknowable
        without the game, taken as 0 and listed."""
        function = self.names.functions.get(call.name)
        if function is None:
            self.timeline.markers.append(Marker(self.now, f"{call.name}(...) taken as 0", "unknown"))
            return 0
        context = _Context([], for_value=True)
        context.frames.append(self._entered(context, _Frame(function, (), locals=local), function, call))
        self._go(context)
        return context.result

    def _truth(self, value):
        return bool(value) and value not in ("false", "0")


def _length(timeline, ended, playing):
    """Through the function's end, what plays then, and the last thing a fork still running after
    it shows (a fork that only waits on the game, e.g. a timer, does not lengthen it)."""
    shown = [e.tick for events in (timeline.camera, timeline.characters, timeline.objects, timeline.shows)
             for e in events]
    return max(ended + 1, playing, max(shown, default=0) + 1)


def _slot_order(context):
    return -1 if context.slot is None else context.slot


def _as_number(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    return float(value) if "." in str(value) else int(value)


def _binary(op, left, right):
    if op in ("and", "or"):
        return (bool(left) and bool(right)) if op == "and" else (bool(left) or bool(right))
    if op in ("eq", "ne"):
        same = left == right or str(left) == str(right)
        return same if op == "eq" else not same
    return {"lt": left < right, "le": left <= right, "gt": left > right, "ge": left >= right, "+": left + right,
            "-": left - right, "*": left * right, "/": left / right if right else 0}[op]
