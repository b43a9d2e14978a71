"""The BSL reader (docs/bsl.md): each construct of the game's scripts read as its exact nodes,
and every node's line. The scripts here are written for the tests, not the game's."""

import pytest

from oban_import.core.errors import ObanError
from oban_import.oni.io.bsl.read import read_script, read_script_text, read_scripts
from oban_import.oni.io.bsl.script import (Assign, Binary, Call, Fork, Function, If, Literal, Name, Return, Sleep,
                                           Unary, Var)


def read(text):
    return read_script_text(text, "t.bsl")


def body(text):
    """The statements of `text` as one function's body."""
    return read(f"func void f(void)\n{{\n{text}\n}}\n").functions[0].body


def call(name, *args, line=3):
    return Call(name, tuple(args), line)


def n(name):
    return Name(name)


def lit(value):
    return Literal(value)


# functions and variables

def test_function_forms():
    script = read("func void a(void) { }\n"
                  "func int b(int count, string who) {}\n"
                  "func c() {}\n"
                  "func void\nKon(\n\tvoid)\n{\n}\n"
                  "func bool d {}\n")
    assert script.functions == (
        Function("a", "void", (), (), "t.bsl", 1),
        Function("b", "int", (("int", "count"), ("string", "who")), (), "t.bsl", 2),
        Function("c", "void", (), (), "t.bsl", 3),
        Function("Kon", "void", (), (), "t.bsl", 4),
        Function("d", "bool", (), (), "t.bsl", 9))
    assert script.variables == ()


def test_global_and_local_variables():
    # `-.5` is a minus and .5: the engine's lexer starts a negative number only at '-' and a digit
    script = read("var int x = 1;\nvar bool b;\nvar float speed = -.5\nvar string who = \"kerr\";\n"
                  "func f() {\n\tvar int local = x + 1;\n\tvar int plain\n}\n")
    assert script.variables == (Var("int", "x", lit(1), 1), Var("bool", "b", None, 2),
                                Var("float", "speed", Unary("-", lit(0.5)), 3), Var("string", "who", lit("kerr"), 4))
    assert script.functions[0].body == (Var("int", "local", Binary("+", n("x"), lit(1)), 6),
                                        Var("int", "plain", None, 7))


# statements and their separators

def test_statements_one_a_line_or_semicolon_separated_with_or_without_a_trailing_semicolon():
    assert body("a\nb;\nc 1; d 2;e\n\tf x y;") == (
        call("a"), call("b", line=4), call("c", lit(1), line=5), call("d", lit(2), line=5), call("e", line=5),
        call("f", n("x"), n("y"), line=6))


def test_a_command_s_arguments_end_at_the_line_a_semicolon_or_a_brace():
    script = read("func f() { dprint one two }\nfunc g() { a 1; b \"s\" }")
    assert script.functions[0].body == (Call("dprint", (n("one"), n("two")), 1),)
    assert script.functions[1].body == (Call("a", (lit(1),), 2), Call("b", (lit("s"),), 2))


def test_stray_semicolons_are_empty_statements():
    script = read(";\nfunc f() {\n;;\n\ta;;\n};\n")
    assert script.functions[0].body == (call("a", line=4),)


def test_a_bare_block_s_statements_join_the_enclosing_ones():
    assert body("a\n{\n\tb\n}") == (call("a"), call("b", line=5))


def test_a_file_without_a_final_newline():
    assert read("func f() {\n\tsleep 5\n}").functions[0].body == (Sleep(lit(5), 2),)
    assert read("var int x = 1;").variables == (Var("int", "x", lit(1), 1),)


# calls

def test_command_form_arguments_are_names_and_literals():
    (statement,) = body('chr_envanim 0 TruckKonBox01 norotation -1 2.5 .5 "a # b" true f30')
    assert statement == call("chr_envanim", lit(0), n("TruckKonBox01"), n("norotation"), lit(-1), lit(2.5), lit(0.5),
                             lit("a # b"), lit(True), lit(30))
    assert [type(a.value) for a in statement.args if isinstance(a, Literal)] == [int, int, float, float, str, bool, int]


def test_parenthesised_calls_with_or_without_a_space():
    statements = body("target_set(1,0)\ncinematic_start (KONlistening, 180, 180, 19, 7, 20, false)\nnothing()")
    assert statements == (call("target_set", lit(1), lit(0)),
                          call("cinematic_start", n("KONlistening"), lit(180), lit(180), lit(19), lit(7), lit(20),
                               lit(False), line=4),
                          call("nothing", line=5))
    assert statements[1].args[-1].value is False


def test_calls_as_expressions():
    (statement,) = body("if (did_kill_griffen() eq 1 and trigvolume_count (42) ne max(a, b + 1)) win")
    assert statement.test == Binary("and", Binary("eq", Call("did_kill_griffen", (), 3), lit(1)),
                                    Binary("ne", Call("trigvolume_count", (lit(42),), 3),
                                           Call("max", (n("a"), Binary("+", n("b"), lit(1))), 3)))
    assert statement.then == (call("win"),)


def test_fork_forms():
    assert body("fork intro\nfork jump 0 KONOKOjump\nfork intro();\nfork taunt(ai_name, 2)") == (
        Fork(call("intro"), 3), Fork(call("jump", lit(0), n("KONOKOjump"), line=4), 4), Fork(call("intro", line=5), 5),
        Fork(call("taunt", n("ai_name"), lit(2), line=6), 6))


# assignments and expressions

def test_assignments():
    assert body("x = 1\na=b+1\nai2_allpassive=1;\nc = c - 1\nd=d-1\ne = -e") == (
        Assign("x", lit(1), 3), Assign("a", Binary("+", n("b"), lit(1)), 4), Assign("ai2_allpassive", lit(1), 5),
        Assign("c", Binary("-", n("c"), lit(1)), 6), Assign("d", Binary("-", n("d"), lit(1)), 7),
        Assign("e", Unary("-", n("e")), 8))


@pytest.mark.parametrize("word, symbol", [("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                                          ("ge", ">="), ("and", "&&"), ("or", "||")])
def test_symbol_operators_read_as_their_word(word, symbol):
    expected = Binary(word, n("a"), lit(2))
    assert body(f"if (a {word} 2) x")[0].test == expected
    assert body(f"if (a{symbol}2) x")[0].test == expected


def test_not_in_both_forms():
    assert body("if (!a) x")[0].test == Unary("not", n("a"))
    assert body("if (not a) x")[0].test == Unary("not", n("a"))
    assert body("if (not(a eq 1)) x")[0].test == Unary("not", Binary("eq", n("a"), lit(1)))


def test_precedence_is_the_engine_s_and_operators_group_left_to_right():
    # + - above eq ne lt le gt ge above and or (BFW_ScriptLang_Expr.c)
    assert body("if (a + 1 eq b - 2 and c or d ne 0) x")[0].test == Binary(
        "or", Binary("and", Binary("eq", Binary("+", n("a"), lit(1)), Binary("-", n("b"), lit(2))), n("c")),
        Binary("ne", n("d"), lit(0)))
    assert body("x = a - b + c")[0].value == Binary("+", Binary("-", n("a"), n("b")), n("c"))
    assert body("x = a - (b + c)")[0].value == Binary("-", n("a"), Binary("+", n("b"), n("c")))


# if

def test_if_else_and_else_if_chains():
    assert body("if (x eq 1) { a } else { b }\n"
                "if(x ne 0)\n{\n\tc\n}\nelse if (x eq 2)\n\td\nelse\n{\n\te\n\tf 1\n}\n"
                "if (ready) go") == (
        If(Binary("eq", n("x"), lit(1)), (call("a"),), (call("b"),), 3),
        If(Binary("ne", n("x"), lit(0)), (call("c", line=6),),
           (If(Binary("eq", n("x"), lit(2)), (call("d", line=9),),
               (call("e", line=12), call("f", lit(1), line=13)), 8),), 4),
        If(n("ready"), (call("go", line=15),), (), 15))


# sleep, return

def test_sleep_forms():
    assert body("sleep 60\nsleep f80\nsleep(60)\nsleep f2.5;\nsleep wait + 1") == (
        Sleep(lit(60), 3), Sleep(lit(80), 4), Sleep(lit(60), 5), Sleep(lit(2.5), 6),
        Sleep(Binary("+", n("wait"), lit(1)), 7))


def test_return_with_and_without_a_value():
    script = read("func int f() {\n\treturn\n\treturn x + 1;\n\treturn;\n}\nfunc g() { return }")
    assert script.functions[0].body == (Return(None, 2), Return(Binary("+", n("x"), lit(1)), 3), Return(None, 4))
    assert script.functions[1].body == (Return(None, 6),)


# the text: numbers, strings, comments, lines

def test_numbers():
    (statement,) = body("g -3 2.5 .5 5. f80 f1.5 -0.25 2147483647 -2147483648")
    assert [a.value for a in statement.args] == [-3, 2.5, 0.5, 5.0, 80, 1.5, -0.25, 2147483647, -2147483648]
    assert [type(a.value) for a in statement.args] == [int, float, float, float, int, float, float, int, int]


def test_strings_keep_what_they_hold():
    (statement,) = body('dprint "hello world" "" "# not a comment" "tab\there;{}"')
    assert statement.args == (lit("hello world"), lit(""), lit("# not a comment"), lit("tab\there;{}"))


def test_lines_right_after_comments_crlf_and_tabs():
    text = ("# a comment\r\n#\r\nvar int x = 1; # after\r\n\r\n"
            "func f()\r\n{\r\n\t# inside\r\n\ta 1 # trailing\r\n\tb\r\n}\r\n")
    script = read(text)
    assert script.variables == (Var("int", "x", lit(1), 3),)
    assert script.functions[0].line == 5
    assert script.functions[0].body == (Call("a", (lit(1),), 8), Call("b", (), 9))
    assert read(text.replace("\r\n", "\r")) == read(text.replace("\r\n", "\n")) == script


def test_every_node_carries_its_line():
    (statement,) = body("if (a eq 1\n\tor !b(\n\t2)) x")
    test = statement.test
    assert (statement.line, test.line, test.left.line, test.left.left.line, test.left.right.line) == (3, 4, 3, 3, 3)
    assert (test.right.line, test.right.operand.line, test.right.operand.args[0].line) == (4, 4, 5)
    assert body("g a 1")[0].args[0].line == body("g a 1")[0].args[1].line == 3


def test_keywords_are_case_sensitive():
    # the engine compares reserved words with strncmp: `IF` and `Sleep` are names
    assert body("IF x\nSleep 5") == (call("IF", n("x")), call("Sleep", lit(5), line=4))


def test_a_word_starting_f_and_a_digit_is_a_number_as_in_the_engine():
    # BFW_ScriptLang_Token.c: 'f' then a digit starts a number; the word's rest is the next token
    assert body("g f12ab")[0].args == (lit(12), n("ab"))
    assert body("g fa1")[0].args == (n("fa1"),)


def test_an_empty_file_or_only_comments():
    assert read("") == read("# nothing\n\n") == read_script_text("", "t.bsl")
    assert read("").functions == read("").variables == ()


# files and folders

def test_a_file_s_bom_and_8_bit_bytes(tmp_path):
    path = tmp_path / "s.bsl"
    path.write_bytes(b'\xef\xbb\xbffunc f() {\r\n\tdprint "caf\xe9"\r\n}')
    script = read_script(str(path))
    assert script.file == str(path)
    assert script.functions[0].body == (Call("dprint", (lit("caf\xe9"),), 2),)
    assert script.functions[0].body[0].args[0].value.encode("latin-1") == b"caf\xe9"
    assert read_script_text("\ufefffunc f() {}", "t.bsl").functions[0].name == "f"


def _write(folder, name, text):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return str(folder / name)


def test_a_level_s_folder_reads_every_bsl_in_it_with_names_across_files(tmp_path):
    first = _write(tmp_path, "a_main.bsl", "var int count = 2;\nfunc void main(void) {\n\tfork helper\n}\n")
    second = _write(tmp_path, "B_CUTSCENE.BSL", "func helper() {\n\tsleep 1\n}\n")
    _write(tmp_path, "notes.txt", "func ignored() {}\n")
    _write(tmp_path / "sub", "nested.bsl", "func nested() {}\n")
    level = read_scripts(str(tmp_path))
    assert [s.file for s in level.scripts] == [second, first]   # by name: "B" sorts before "a"
    assert set(level.functions) == {"main", "helper"}
    assert level.functions["helper"] == level.scripts[0].functions[0]
    assert level.functions["main"].file == first
    assert level.variables == {"count": Var("int", "count", lit(2), 1)}


@pytest.mark.parametrize("defined, again, kind", [("func void main(void) {\n}", "func main() {}", "function"),
                                                   ("var int main;", "var bool main", "variable")])
def test_a_name_defined_twice_in_a_level_names_both_places(tmp_path, defined, again, kind):
    first = _write(tmp_path, "a.bsl", f"\n{defined}\n")
    second = _write(tmp_path, "b.bsl", f"# again\n\n{again}\n")
    with pytest.raises(ObanError) as raised:
        read_scripts(str(tmp_path))
    assert raised.value.path == second
    assert raised.value.problem == f"line 3: expected one {kind} 'main', found a second (the first is {first} line 2)"


def test_a_function_and_a_variable_may_share_a_name(tmp_path):
    # the engine looks a symbol up by name and kind (BFW_ScriptLang_Database.c: SLiSymbol_Find)
    _write(tmp_path, "a.bsl", "var int intro = 1;\nfunc intro() {}\n")
    level = read_scripts(str(tmp_path))
    assert (level.functions["intro"].line, level.variables["intro"].line) == (2, 1)


def test_a_level_s_folder_that_cannot_be_listed(tmp_path):
    with pytest.raises(ObanError, match="cannot be read"):
        read_scripts(str(tmp_path / "missing"))
