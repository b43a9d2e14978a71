"""The one error type every reader raises for bad input."""


class ObanError(Exception):
    """Bad input: `path` names the file, `problem` says what is wrong with it."""

    def __init__(self, path, problem):
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem
