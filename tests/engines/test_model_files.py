"""Loading model files: truncated or foreign files are refused with one line, never a crash (issue 16).

LightGBM dies with signal 11 or 6 on a truncated text model and XGBoost on a truncated UBJSON one, so the
truncation sweeps run in a subprocess: a crash fails the test instead of killing pytest.
"""

import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from plboost.cli import main as cli
from plboost.data import make_synthetic
from plboost.engines import load_model, train
from plboost.objectives import PLRank

#: a script that cuts a model file at the given offsets and loads each cut; prints one JSON line per cut
SWEEP = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    from plboost.engines import load_model
    source, target, X = sys.argv[1], sys.argv[2], np.load(sys.argv[3])
    data = open(source, "rb").read()
    for cut in json.loads(sys.argv[4]):
        with open(target, "wb") as file:
            file.write(data[:cut])
        try:
            scores = load_model(target).predict(X)
            print(json.dumps({"cut": cut, "loaded": True, "scores": scores.tolist()}), flush=True)
        except ValueError as error:
            print(json.dumps({"cut": cut, "loaded": False, "error": str(error)}), flush=True)
""")


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_queries=40, n_features=5, seed=3)


@pytest.fixture(scope="module")
def models(data, tmp_path_factory):
    """A LightGBM model (.txt) and an XGBoost one in JSON and UBJSON, each 10 trees, saved by plboost."""
    directory = tmp_path_factory.mktemp("models")
    lightgbm = train("lightgbm", PLRank(), data, rounds=10, engine_params={"min_data_in_leaf": 5})
    xgboost = train("xgboost", PLRank(), data, rounds=10)
    lightgbm.save(directory / "model.txt")
    xgboost.save(directory / "model.json")
    xgboost.save(directory / "model.ubj")
    return directory, {"lightgbm": lightgbm, "xgboost": xgboost}


def sweep(source, cuts, tmp_path, X):
    np.save(tmp_path / "X.npy", X)
    target = tmp_path / f"cut{source.suffix}"
    run = subprocess.run([sys.executable, "-c", SWEEP, str(source), str(target), str(tmp_path / "X.npy"),
                          json.dumps(cuts)], capture_output=True, text=True, timeout=600)
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert run.returncode == 0, (f"the process died (status {run.returncode}) after {len(lines)} of {len(cuts)} "
                                 f"cuts, at byte {cuts[len(lines)] if len(lines) < len(cuts) else '?'}:\n"
                                 f"{run.stderr[-2000:]}")
    assert [line["cut"] for line in lines] == cuts
    return lines, target


@pytest.mark.engine
def test_truncated_lightgbm_model_is_refused_at_every_offset(models, data, tmp_path):
    directory, trained = models
    source = directory / "model.txt"
    text = source.read_bytes()
    complete = text.index(b"\nend of parameters\n") + len(b"\nend of parameters\n")
    # every 2% of the file, the 1000 and 6000 bytes, and a few bytes around each section marker
    marks = [text.index(marker) for marker in (b"tree_sizes=", b"\nTree=1\n", b"end of trees", b"parameters:",
                                               b"end of parameters", b"pandas_categorical")]
    cuts = sorted({len(text) * k // 50 for k in range(50)} | {1000, 6000}
                  | {m + d for m in marks for d in (-1, 0, 1, 5)} | {complete, len(text) - 1, len(text)})
    lines, target = sweep(source, cuts, tmp_path, data.X)
    expected = trained["lightgbm"].predict(data.X)
    for line in lines:
        if line["cut"] < complete or not line["loaded"]:
            assert not line["loaded"], f"a cut at byte {line['cut']} of {len(text)} was loaded"
            assert line["error"].startswith(str(target)) and "\n" not in line["error"], line["error"]
        else:  # only the trailing pandas_categorical line is missing: still the whole model
            np.testing.assert_allclose(line["scores"], expected, rtol=1e-6)
    by_cut = {line["cut"]: line for line in lines}
    assert by_cut[len(text)]["loaded"]
    assert "ends inside tree 0 of 10" in by_cut[1000]["error"]
    assert "is a truncated LightGBM model" in by_cut[6000]["error"]
    assert "no 'end of parameters' line" in by_cut[text.index(b"end of parameters") + 5]["error"]


@pytest.mark.engine
@pytest.mark.parametrize("suffix", [".json", ".ubj"])
def test_truncated_xgboost_model_is_refused_at_every_offset(models, data, tmp_path, suffix):
    directory, trained = models
    source = directory / f"model{suffix}"
    size = source.stat().st_size
    cuts = sorted({size * k // 100 for k in range(100)} | {1, 2, size - 2, size - 1, size})
    lines, target = sweep(source, cuts, tmp_path, data.X)
    for line in lines[:-1]:
        assert not line["loaded"], f"a cut at byte {line['cut']} of {size} was loaded"
        assert line["error"].startswith(str(target)) and "\n" not in line["error"], line["error"]
        assert "Stack trace" not in line["error"]
    np.testing.assert_allclose(lines[-1]["scores"], trained["xgboost"].predict(data.X), rtol=1e-6)


@pytest.mark.engine
@pytest.mark.parametrize("content, name", [("model.ubj", "xgb.txt"), ("model.json", "xgb.txt"),
                                           ("model.json", "xgb.model"), ("model.txt", "lgb.json")])
def test_the_format_is_told_by_the_content_not_the_name(models, data, tmp_path, content, name):
    directory, trained = models
    path = tmp_path / name
    path.write_bytes((directory / content).read_bytes())
    engine = "lightgbm" if content.endswith(".txt") else "xgboost"
    model = load_model(path)
    assert model.engine == engine and model.n_features == data.n_features
    np.testing.assert_allclose(model.predict(data.X), trained[engine].predict(data.X), rtol=1e-6)


@pytest.mark.engine
def test_an_xgboost_model_saved_as_txt_is_evaluated(models, data, tmp_path, capsys):
    """``TrainedModel.save("m.txt")`` of an XGBoost model writes UBJSON; ``plboost evaluate`` reads it back."""
    path = tmp_path / "m.txt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # XGBoost: "Saving model in the UBJSON format as default"
        models[1]["xgboost"].save(path)
    assert path.read_bytes()[:2] == b"{L"  # UBJSON
    data_path = data.save_svmlight(tmp_path / "data.txt")
    assert cli(["evaluate", "--model", str(path), "--data", str(data_path), "--quiet"]) == 0
    assert "NDCG@10" in capsys.readouterr().out


def test_a_results_file_is_not_a_model(data, tmp_path, capsys):
    results = tmp_path / "result.json"
    results.write_text(json.dumps({"metrics": {"NDCG@10": 0.5}, "model": {"rounds": 10}}, indent=2))
    with pytest.raises(ValueError, match=r"result\.json is not an XGBoost model: no 'learner' key; is it a results "
                                         r"file\? \(its keys: metrics, model\)"):
        load_model(results)
    data_path = data.save_svmlight(tmp_path / "data.txt")
    assert cli(["evaluate", "--model", str(results), "--data", str(data_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no 'learner' key" in err, err


@pytest.mark.parametrize("content, message", [
    (b"", r"is empty, not a model file"),
    (b"2 qid:1 1:0.5\n", r"is not a LightGBM model file \(its first line is not 'tree'\), an XGBoost model"),
    (b"[1, 2]", r"is not an XGBoost model: its JSON is a list, not an object"),
    (b'{"learner": {"objective": {}}}', r"is not a complete XGBoost model: its 'learner' has no 'gradient_booster'"),
    (b'{"learner": 1, "x": [1, 2', r"is a truncated XGBoost JSON model: it ends inside a value at byte 25"),
    (b"{i\x07learnerZ}", r"is not a complete XGBoost model: its 'learner' has no 'gradient_booster'"),
    (b"{i\x05hello[$d#i\x09\x00\x00}", r"is a truncated XGBoost UBJSON model"),
    (b"{i\x05helloQ}", r"is not a valid XGBoost UBJSON model: byte 8: unknown type marker 'Q'"),
    (b"tree\nversion=v4\nnum_class=1\n", r"is a truncated LightGBM model: it ends in the header"),
    (b"tree\nversion=v4\n\nTree=0\nnum_leaves=1\n\n\nend of trees\n",
     r"is not a valid LightGBM model: its header has no num_class= line"),
])
def test_files_that_are_not_models(tmp_path, content, message):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as raised:
        load_model(path)
    assert str(raised.value).startswith(str(path))


def test_a_directory_is_not_a_model(tmp_path):
    with pytest.raises(ValueError, match="is a directory, not a model file"):
        load_model(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_model(tmp_path / "missing.txt")


#: damaged fields of a LightGBM model's first tree, each edit of the same length (so that tree_sizes= still holds):
#: (field, the first value's replacement made from it, what plboost says). LightGBM aborted the process on the first
#: two, and predicted from memory outside the tree on the next ones
LIGHTGBM_DAMAGE = [
    ("num_leaves", lambda v: "9" * len(v), "Tree 0, leaf_value= holds"),
    ("threshold", lambda v: "x" * len(v), "Tree 0, threshold= holds something that is not a number"),
    ("split_feature", lambda v: "9" * len(v), "Tree 0, split_feature=9 is beyond the model's 5 features"),
    ("left_child", lambda v: "9" * len(v), "Tree 0, a left_child= or right_child= entry points outside the tree"),
    ("left_child", lambda v: "0" * len(v), "Tree 0, left_child= and right_child= do not make a tree"),
]


def damaged(text: str, field: str, edit) -> str:
    """``text`` with the first value of the first tree's ``field=`` line replaced by ``edit(value)``."""
    start = text.index(f"\n{field}=", text.index("Tree=0\n")) + len(field) + 2
    end = min(text.index(" ", start), text.index("\n", start))
    return text[:start] + edit(text[start:end]) + text[end:]


@pytest.mark.engine
def test_a_lightgbm_model_whose_trees_are_damaged_is_refused_naming_the_tree_and_field(models, tmp_path):
    """Loaded in a child process: before the check, some of these aborted LightGBM (SIGABRT)."""
    directory, _ = models
    text = (directory / "model.txt").read_text()
    paths = []
    for number, (field, edit, _) in enumerate(LIGHTGBM_DAMAGE):
        paths.append(tmp_path / f"damaged{number}.txt")
        paths[-1].write_text(damaged(text, field, edit))
        assert len(paths[-1].read_text()) == len(text)
    code = textwrap.dedent("""
        import json, sys
        from plboost.engines import load_model
        for path in sys.argv[1:]:
            try:
                load_model(path)
                print(json.dumps("loaded"))
            except ValueError as error:
                print(json.dumps(str(error)))
    """)
    run = subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    messages = [json.loads(line) for line in run.stdout.splitlines()]
    for path, message, (_, _, expected) in zip(paths, messages, LIGHTGBM_DAMAGE, strict=True):
        assert message.startswith(f"{path} is not a valid LightGBM model: ") and expected in message, message


@pytest.mark.engine
@pytest.mark.parametrize("field, value, expected", [
    ("split_indices", 999999, "tree 0, split_indices holds 999999, beyond the model's 5 features"),
    ("left_children", 10 ** 6, "tree 0, a left_children or right_children entry points outside the tree's"),
    ("left_children", 0, "tree 0, left_children and right_children do not make a tree"),
    ("right_children", None, "tree 0, a field is missing or not numbers"),
])
def test_an_xgboost_model_whose_trees_are_damaged_is_refused_naming_the_tree_and_field(models, tmp_path, field,
                                                                                       value, expected):
    """XGBoost crashed (segmentation fault) on split_indices of 999999 or left_children of 10^6. Loaded in a child
    process, so that a regression fails the test instead of the suite."""
    directory, _ = models
    model = json.loads((directory / "model.json").read_text())
    tree = model["learner"]["gradient_booster"]["model"]["trees"][0]
    tree[field][0] = value
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(model))
    code = ("import sys\nfrom plboost.engines import load_model\ntry:\n    load_model(sys.argv[1])\n"
            "except ValueError as error:\n    print(error)\n")
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().startswith(f"{path} is not a valid XGBoost model: ") and expected in run.stdout


@pytest.mark.engine
def test_an_xgboost_ubjson_model_whose_split_indices_are_damaged_is_refused(models, tmp_path):
    """The UBJSON model's first split_indices entry set to 999999 in place (XGBoost crashed on such a JSON model)."""
    import struct

    from plboost.engines._model_files import _UBJ_SIZES

    directory, _ = models
    data = bytearray((directory / "model.ubj").read_bytes())
    at = data.index(b"split_indices") + len(b"split_indices")
    assert data[at:at + 2] == b"[$" and data[at + 3:at + 4] == b"#"
    kind, length_marker = data[at + 2], data[at + 4]
    start = at + 5 + _UBJ_SIZES[length_marker]
    assert kind == ord("l")  # 32-bit integers, big-endian
    data[start:start + 4] = struct.pack(">i", 999999)
    path = tmp_path / "damaged.ubj"
    path.write_bytes(bytes(data))
    code = ("import sys\nfrom plboost.engines import load_model\ntry:\n    load_model(sys.argv[1])\n"
            "except ValueError as error:\n    print(error)\n")
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == (f"{path} is not a valid XGBoost model: tree 0, split_indices holds 999999, beyond "
                                  "the model's 5 features")
