import pytest

from plboost.data import svmlight_parser


@pytest.fixture
def parser_calls(monkeypatch):
    """Counts the chunks the loaders parse (calls of the compiled parser's entry point)."""
    calls = []
    parse = svmlight_parser.read_documents

    def counting(*args, **kwargs):
        calls.append(1)
        return parse(*args, **kwargs)

    monkeypatch.setattr(svmlight_parser, "read_documents", counting)
    return calls
