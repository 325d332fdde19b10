import pytest

from plboost.data import svmlight


@pytest.fixture
def parser_calls(monkeypatch):
    """Counts the chunks the loaders parse (calls of the compiled parser's entry point)."""
    calls = []
    parse = svmlight._read_documents

    def counting(*args, **kwargs):
        calls.append(1)
        return parse(*args, **kwargs)

    monkeypatch.setattr(svmlight, "_read_documents", counting)
    return calls
