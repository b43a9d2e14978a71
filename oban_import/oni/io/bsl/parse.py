"""BSL's parser (docs/bsl.md 3): a script's tokens (tokens.py) as its nodes (script.py), by
the grammar of the engine's BFW_ScriptLang_Parse.c, a little wider where docs/bsl.md says."""

from .script import Assign, Binary, Call, Fork, Function, If, Literal, Name, Return, Script, Sleep, Unary, Var
from .tokens import refuse, shown, tokenize

# Blocks, parentheses, calls' argument lists and unary operators within each other (the
# engine's own parse stack is 64 states deep: BFW_ScriptLang_Private.h).
MAX_NESTING = 64
TYPES = ("int", "float", "string", "bool", "void")
# A binary operator's name and precedence (the engine's, BFW_ScriptLang_Expr.c); the symbol
# and word forms the engine does not know read as the ones it does.
BINARY = {"or": ("or", 5), "||": ("or", 5), "and": ("and", 5), "&&": ("and", 5),
          "eq": ("eq", 10), "==": ("eq", 10), "ne": ("ne", 10), "!=": ("ne", 10),
          "lt": ("lt", 10), "<": ("lt", 10), "le": ("le", 10), "<=": ("le", 10),
          "gt": ("gt", 10), ">": ("gt", 10), "ge": ("ge", 10), ">=": ("ge", 10),
          "+": ("+", 20), "-": ("-", 20)}
VALUES = ("number", "string", "bool")
UNARY = ("!", "-", "not")


def parse(text: str, file: str) -> Script:
    """The Script `text` holds; ObanError(file, "line N: expected X, found Y") otherwise."""
    return _Parser(tokenize(text, file), file).script()


class _Parser:
    def __init__(self, tokens, file):
        self.tokens = tokens + tokens[-1:]   # peek(1) past the end sees the end
        self.at = 0
        self.file = file
        self.depth = 0

    # tokens

    def peek(self, ahead=0):
        return self.tokens[self.at + ahead]

    def ends_line(self, at):
        """Whether a new line or the end of the file follows the token at `at` (the
        engine's SLcTokenFlag_PrecedesNewline)."""
        following = self.tokens[at + 1]
        return following.line != self.tokens[at].line or following.kind == "end"

    def next(self):
        token = self.tokens[self.at]
        if token.kind != "end":
            self.at += 1
        return token

    def expect(self, text, expected):
        token = self.next()
        if token.text != text:
            self.fail(token, expected)
        return token

    def fail(self, token, expected):
        refuse(self.file, token.line, expected, "the end of the file" if token.kind == "end" else shown(token.text))

    def enter(self, token):
        self.depth += 1
        if self.depth > MAX_NESTING:
            refuse(self.file, token.line, f"at most {MAX_NESTING} blocks, parentheses or operators within each other",
                   f"{self.depth}")

    def name(self, expected):
        token = self.next()
        if token.kind != "name":
            self.fail(token, expected)
        return token.text

    def type(self):
        token = self.next()
        if token.kind != "keyword" or token.text not in TYPES:
            self.fail(token, "a type (int, float, string, bool or void)")
        return token.text

    # the file

    def script(self):
        functions, variables = [], []
        while (token := self.peek()).kind != "end":
            if token.text == ";":
                self.next()
            elif token.text == "func":
                functions.append(self.function())
            elif token.text == "var":
                variables.append(self.var())
            else:
                self.fail(token, "'func' or 'var'")
        return Script(self.file, tuple(functions), tuple(variables))

    def function(self):
        start = self.next()
        returns = self.type() if self.peek().kind == "keyword" and self.peek().text in TYPES else "void"
        name = self.name("a function name")
        params = ()
        if self.peek().text == "(":
            self.next()
            params = self.params()
        opening = self.expect("{", "'{' to open the function's body")
        return Function(name, returns, params, self.block(opening), self.file, start.line)

    def params(self):
        if self.peek().text == ")" or (self.peek().text == "void" and self.peek(1).text == ")"):
            self.at += 1 if self.peek().text == ")" else 2
            return ()
        params = []
        while True:
            kind = self.type()
            params.append((kind, self.name("a parameter name")))
            token = self.next()
            if token.text == ")":
                return tuple(params)
            if token.text != ",":
                self.fail(token, "',' or ')'")

    # statements

    def block(self, opening):
        """The statements up to the '}' closing `opening` (already read)."""
        self.enter(opening)
        statements = []
        while (token := self.peek()).text != "}":
            if token.kind == "end":
                self.fail(token, f"'}}' to close the '{{' of line {opening.line}")
            statements.extend(self.statement())
        self.next()
        self.depth -= 1
        return tuple(statements)

    def statement(self):
        """A statement's nodes: none for a lone ';', a bare block's statements, else one."""
        token = self.peek()
        if token.kind == "name":
            if self.peek(1).text == "=":
                self.at += 2
                statement = Assign(token.text, self.expression(), token.line)
            else:
                statement = self.call()
        elif token.kind != "keyword" and token.kind != "symbol":
            self.fail(token, "a statement")
        elif token.text == ";":
            self.next()
            return ()
        elif token.text == "{":
            return self.block(self.next())
        elif token.text == "var":
            return (self.var(),)
        elif token.text == "if":
            return (self.if_(),)
        elif token.text == "sleep":
            self.next()
            statement = Sleep(self.expression(), token.line)
        elif token.text == "fork":
            self.next()
            statement = Fork(self.call(), token.line)
        elif token.text == "return":
            self.next()
            statement = Return(None if self.ends_statement() else self.expression(), token.line)
        else:
            self.fail(token, "a statement")
        self.end_statement()
        return (statement,)

    def ends_statement(self):
        token = self.peek()
        return self.ends_line(self.at - 1) or token.kind == "end" or token.text == ";" or token.text == "}"

    def end_statement(self):
        if not self.ends_statement():
            self.fail(self.peek(), "';' or a new line")
        if self.peek().text == ";":
            self.next()

    def var(self):
        start = self.next()
        kind = self.type()
        name = self.name("a variable name")
        value = None
        if self.peek().text == "=":
            self.next()
            value = self.expression()
        self.end_statement()
        return Var(kind, name, value, start.line)

    def if_(self):
        start = self.next()
        self.expect("(", "'(' after 'if'")
        test = self.expression()
        self.expect(")", "')' to close the condition")
        then = self.body()
        otherwise = ()
        if self.peek().text == "else":
            self.next()
            otherwise = self.body()
        return If(test, then, otherwise, start.line)

    def body(self):
        """An if's or else's statements: a block, or one statement."""
        token = self.peek()
        if token.text == "{":
            return self.block(self.next())
        self.enter(token)
        statements = self.statement()
        self.depth -= 1
        return statements

    def call(self):
        """`name(a, b)` or the command form `name a b`, whose arguments are single words,
        numbers and strings up to the end of the line, a ';' or a '}'."""
        token = self.next()
        if token.kind != "name":
            self.fail(token, "a function name")
        if self.peek().text == "(":
            return Call(token.text, self.arguments(self.next()), token.line)
        args = []
        while not (self.ends_line(self.at - 1) or (arg := self.peek()).text == ";" or arg.text == "}"):
            if arg.kind != "name" and arg.kind not in VALUES:
                self.fail(arg, "an argument (a word, number or string) or the end of the line")
            self.next()
            args.append(Name(arg.text, arg.line) if arg.kind == "name" else Literal(arg.value, arg.line))
        return Call(token.text, tuple(args), token.line)

    def arguments(self, opening):
        """A call's arguments after its '(', up to its ')'."""
        self.enter(opening)
        args = []
        if self.peek().text == ")":
            self.next()
        else:
            while True:
                args.append(self.expression())
                token = self.next()
                if token.text == ")":
                    break
                if token.text != ",":
                    self.fail(token, "',' or ')'")
        self.depth -= 1
        return tuple(args)

    # expressions

    def expression(self, lowest=0):
        """Binary operators of precedence `lowest` and above, left to right."""
        left = self.unary()
        while True:
            token = self.peek()
            if token.kind == "number" and token.text.startswith("-"):
                # `b-1`: the lexer reads "-1" as a number (as the engine's does); here it subtracts
                if lowest > 20:
                    return left
                self.next()
                left = Binary("-", left, Literal(-token.value, token.line), token.line)
                continue
            op = BINARY.get(token.text) if token.kind in ("symbol", "keyword", "name") else None
            if op is None or op[1] < lowest:
                return left
            self.next()
            left = Binary(op[0], left, self.expression(op[1] + 1), token.line)

    def unary(self):
        token = self.peek()
        if token.text in UNARY and (token.kind == "symbol" or _starts_operand(self.peek(1))):
            self.next()
            self.enter(token)
            operand = self.unary()
            self.depth -= 1
            return Unary("-" if token.text == "-" else "not", operand, token.line)
        return self.primary()

    def primary(self):
        token = self.next()
        if token.kind in VALUES:
            return Literal(token.value, token.line)
        if token.kind == "name":
            if self.peek().text == "(":
                return Call(token.text, self.arguments(self.next()), token.line)
            return Name(token.text, token.line)
        if token.text == "(":
            self.enter(token)
            value = self.expression()
            self.expect(")", "')'")
            self.depth -= 1
            return value
        self.fail(token, "a value (a number, string, name, call or '(')")


def _starts_operand(token):
    return token.kind in VALUES or token.kind == "name" or token.text in ("(", "!", "-") and token.kind == "symbol"


