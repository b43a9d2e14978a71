"""BSL scripts that do not read (docs/bsl.md 5, docs/bad_input.md): each refused with one
ObanError naming the file and the line, what was expected and what was found; never a
traceback or a partial Script. Then hypothesis: random bytes and random token soup only
ever give a Script or an ObanError."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oban_import.core.errors import ObanError
from oban_import.oni.io.bsl.read import read_script, read_script_text
from oban_import.oni.io.bsl.script import Script

DEEP = 10_000
REFUSED = {
    "unclosed_brace": ("func f() {\n\tdprint hi\n",
                       "line 3: expected '}' to close the '{' of line 1, found the end of the file"),
    "unclosed_string": ('func f() {\n\tdprint "hi\n}\n',
                        "line 2: expected a closing \" on the same line, found the end of the line after '\"hi'"),
    "func_without_a_name": ("func void (void) {\n}\n", "line 1: expected a function name, found '('"),
    "if_without_a_paren": ("func f() {\n\n\tif x eq 1 { a }\n}\n", "line 3: expected '(' after 'if', found 'x'"),
    "condition_not_closed": ("func f() {\n\tif (x eq 1 {\n}\n}\n",
                             "line 2: expected ')' to close the condition, found '{'"),
    "stray_brace": ("func f() {\n}\n}\n", "line 3: expected 'func' or 'var', found '}'"),
    "statement_outside_a_function": ("# start\ndprint hi\n", "line 2: expected 'func' or 'var', found 'dprint'"),
    "unknown_character": ("func f() {\n\tx = 1 @ 2\n}\n",
                          "line 2: expected a word, number, string or symbol, found the character '@'"),
    "nul_byte": ("func f() {\n\x00\n}\n",
                 "line 2: expected a word, number, string or symbol, found the character '\\x00'"),
    "8_bit_byte_outside_a_string": ("func f() {\n\tdprint caf\xe9\n}\n",
                                    "line 2: expected a word, number, string or symbol, found the character '\\xe9'"),
    "number_past_int32": ("func f() {\n\tsleep 2147483648\n}\n",
                          "line 2: expected a whole number from -2147483648 to 2147483647, found '2147483648'"),
    "number_past_float32": ("func f() {\n\tg 1" + "0" * 39 + ".0\n}\n",
                            "line 2: expected a number within a 32-bit float's range, found '1" + "0" * 39 + "...'"),
    "malformed_number": ("func f() {\n\tx = 1.2.3\n}\n", "line 2: expected a number, found '1.2.3'"),
    "number_joined_by_a_minus": ("func f() {\n\tx = 5-3\n}\n", "line 2: expected a number, found '5-3'"),
    "two_statements_on_a_line": ("func f() {\n\tx = 1 y = 2\n}\n", "line 2: expected ';' or a new line, found 'y'"),
    "command_argument_not_a_value": ("func f() {\n\tdprint a = b\n}\n",
                                     "line 2: expected an argument (a word, number or string) or the end of the line,"
                                     " found '='"),
    "call_not_closed": ("func f() {\n\tg(1, 2\n}\n", "line 3: expected ',' or ')', found '}'"),
    "var_without_a_type": ("var x = 1;\n", "line 1: expected a type (int, float, string, bool or void), found 'x'"),
    "schedule_is_not_read": ("func f() {\n\tschedule g() at 5\n}\n", "line 2: expected a statement, found 'schedule'"),
    "iterate_is_not_read": ("func f() {\n\titerate over x using y a\n}\n",
                            "line 2: expected a statement, found 'iterate'"),
    "nested_ifs": ("func f() {\n" + "if (1) " * DEEP + "a\n}\n",
                   "line 2: expected at most 64 blocks, parentheses or operators within each other, found 65"),
    "nested_parentheses": ("func f() {\n x = " + "(" * DEEP + "1" + ")" * DEEP + "\n}\n",
                           "line 2: expected at most 64 blocks, parentheses or operators within each other, found 65"),
    "nested_blocks": ("func f() " + "{\n" * DEEP + "}" * DEEP,
                      "line 65: expected at most 64 blocks, parentheses or operators within each other, found 65"),
    "nested_nots": ("func f() {\n x = " + "!" * DEEP + "1\n}\n",
                    "line 2: expected at most 64 blocks, parentheses or operators within each other, found 65"),
    "nested_calls": ("func f() {\n x = " + "g(" * DEEP + ")" * DEEP + "\n}\n",
                     "line 2: expected at most 64 blocks, parentheses or operators within each other, found 65"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_bad_input_is_refused_naming_the_file_line_expected_and_found(case):
    text, problem = REFUSED[case]
    with pytest.raises(ObanError) as raised:
        read_script_text(text, "level/bad.bsl")
    assert (raised.value.path, raised.value.problem) == ("level/bad.bsl", problem)
    assert str(raised.value) == f"level/bad.bsl: {problem}"


def test_a_binary_file_is_refused_at_its_first_byte_the_engine_would_not_read(tmp_path):
    path = tmp_path / "level.bsl"
    path.write_bytes(b"func f() {\n\tdprint hi\n}\n\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(ObanError) as raised:
        read_script(str(path))
    assert (raised.value.path, raised.value.problem) == (
        str(path), "line 4: expected a word, number, string or symbol, found the character '\\x89'")


def test_a_missing_file_or_a_folder_is_refused(tmp_path):
    with pytest.raises(ObanError, match="cannot be read"):
        read_script(str(tmp_path / "missing.bsl"))
    with pytest.raises(ObanError, match="is a directory"):
        read_script(str(tmp_path))


def test_a_file_over_16_mib_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.bsl"
    with open(path, "wb") as f:
        f.truncate(16 * 2 ** 20 + 1)   # sparse: no disk, and nothing to read
    with pytest.raises(ObanError) as raised:
        read_script(str(path))
    assert raised.value.problem == "expected at most 16777216 bytes for a script, found 16777217"


def test_an_empty_file_is_a_script_without_functions(tmp_path):
    path = tmp_path / "empty.bsl"
    path.write_bytes(b"")
    assert read_script(str(path)) == Script(str(path), (), ())


def _only_a_script_or_oban_error(read):
    try:
        assert isinstance(read(), Script)
    except ObanError as error:
        assert error.problem.startswith("line ") or "bytes" in error.problem


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_random_bytes_give_a_script_or_an_oban_error(tmp_path, data):
    path = tmp_path / "fuzz.bsl"
    path.write_bytes(data)
    _only_a_script_or_oban_error(lambda: read_script(str(path)))


PIECES = ["func", "void", "int", "string", "bool", "float", "var", "if", "else", "sleep", "fork", "return",
          "schedule", "at", "repeat", "every", "eq", "ne", "lt", "and", "or", "not", "true", "false",
          "name", "f80", "-1", "2.5", ".5", "1.", '"s"', '"open', "(", ")", "{", "}", ",", ";", "=", "==", "!",
          "!=", "<", ">=", "&&", "||", "+", "-", "#c", "@", "\t", "\n", "\r\n", "\r", " "]


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=60), spaces=st.lists(st.sampled_from(["", " ", "\n"]),
                                                                              min_size=60, max_size=60))
def test_random_token_soup_gives_a_script_or_an_oban_error(pieces, spaces):
    text = "".join(piece + space for piece, space in zip(pieces, spaces))
    _only_a_script_or_oban_error(lambda: read_script_text(text, "soup.bsl"))
    _only_a_script_or_oban_error(lambda: read_script_text("func f() {\n" + text + "\n}\n", "soup.bsl"))
