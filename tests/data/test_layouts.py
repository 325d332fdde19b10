"""Recognising benchmark directories: LETOR 4.0/MSLR and LETOR 3.0 folds, Yahoo! LTR, one triple."""

import pytest

from plboost.data.layouts import find_layout


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("0 qid:1 1:0.5\n")
    return path


def test_letor4_and_mslr_folds_with_gz(tmp_path):
    for fold in (1, 2, 10):
        for name in ("train", "vali", "test"):
            touch(tmp_path / f"Fold{fold}" / (f"{name}.txt.gz" if fold == 2 else f"{name}.txt"))
    layout = find_layout(tmp_path)
    assert layout.kind == "letor4"
    assert [s.name for s in layout.splits] == ["Fold1", "Fold2", "Fold10"]
    assert layout.splits[1].valid == tmp_path / "Fold2" / "vali.txt.gz"


def test_letor3_folds(tmp_path):
    for fold in (1, 2, 3, 4, 5):
        for name in ("trainingset", "validationset", "testset"):
            touch(tmp_path / f"Fold{fold}" / f"{name}.txt")
    layout = find_layout(tmp_path)
    assert layout.kind == "letor3" and len(layout.splits) == 5
    assert layout.splits[4].test == tmp_path / "Fold5" / "testset.txt"


def test_yahoo_sets(tmp_path):
    for number in (1, 2):
        for part in ("train", "valid", "test"):
            touch(tmp_path / f"set{number}.{part}.txt")
    layout = find_layout(tmp_path)
    assert layout.kind == "yahoo"
    assert [(s.name, s.valid.name) for s in layout.splits] == [("set1", "set1.valid.txt"), ("set2", "set2.valid.txt")]


def test_one_triple_with_or_without_validation(tmp_path):
    for name in ("train.txt", "vali.txt", "test.txt.gz"):
        touch(tmp_path / "a" / name)
    layout = find_layout(tmp_path / "a")
    assert layout.kind == "single" and layout.splits[0].valid.name == "vali.txt"
    touch(tmp_path / "b" / "my.train.data.txt")
    touch(tmp_path / "b" / "my.test.data.txt")
    assert find_layout(tmp_path / "b").splits[0].valid is None


def test_tables_stand_in_for_svmlight_files_but_not_beside_them(tmp_path):
    for name in ("train.parquet", "vali.csv.gz", "test.csv"):
        touch(tmp_path / "Fold1" / name)
    (split,) = find_layout(tmp_path).splits
    assert (split.train.name, split.valid.name, split.test.name) == ("train.parquet", "vali.csv.gz", "test.csv")
    touch(tmp_path / "Fold1" / "train.txt.gz")
    with pytest.raises(ValueError, match="Fold1: train.txt.gz and train.parquet are the same part in 2 formats"):
        find_layout(tmp_path)
    for name in ("set1.train.pq", "set1.valid.pq", "set1.test.pq"):
        touch(tmp_path / "yahoo" / name)
    assert find_layout(tmp_path / "yahoo").splits[0].test.name == "set1.test.pq"
    for name in ("web.train.csv", "web.test.csv"):
        touch(tmp_path / "one" / name)
    assert find_layout(tmp_path / "one").splits[0].train.name == "web.train.csv"


def test_the_mslr_slice_in_shared_data(shared_data):
    layout = find_layout(shared_data / "MSLR-WEB10K-5k")
    assert layout.kind == "single"
    assert layout.splits[0].train.name == "msn1.fold1.train.5k.txt.gz" and layout.splits[0].valid is None


def test_mq2008_is_letor4(shared_data):
    layout = find_layout(shared_data / "MQ2008")
    assert layout.kind == "letor4" and [s.name for s in layout.splits] == [f"Fold{i}" for i in range(1, 6)]


def test_unrecognised_directories_list_what_was_expected(tmp_path):
    touch(tmp_path / "Fold1" / "train.txt")  # a fold without vali/test
    touch(tmp_path / "notes.txt")
    with pytest.raises(ValueError) as raised:
        find_layout(tmp_path)
    message = str(raised.value)
    for expected in ("Fold1/train.txt, Fold1/vali.txt", "trainingset.txt", "set1.train.txt", "'train'",
                     "Found: Fold1/train.txt, notes.txt"):
        assert expected in message
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_layout(tmp_path / "missing")


def test_lightgbm_example_naming_with_query_files(shared_data):
    layout = find_layout(shared_data / "lightgbm_lambdarank")
    assert layout.kind == "single"
    (split,) = layout.splits
    assert (split.train.name, split.valid, split.test.name) == ("rank.train.gz", None, "rank.test.gz")


def test_a_registered_layout_is_recognised_after_the_built_in_ones_and_named_in_the_error(tmp_path):
    from plboost.data.layouts import Split, register_layout, registered_layouts, unregister_layout

    def by_day(directory):
        """Splits of files day1.train / day1.test / day2.train / ..."""
        days = sorted(p.name.split(".")[0] for p in directory.glob("day*.train"))
        return tuple(Split(day, directory / f"{day}.train", None, directory / f"{day}.test") for day in days)

    for day in ("day1", "day2"):
        for part in ("train", "test"):
            (tmp_path / f"{day}.{part}").write_text("1 qid:1 1:1\n0 qid:1 1:0\n")
    with pytest.raises(ValueError, match="no known dataset layout"):
        find_layout(tmp_path)
    register_layout("daily", by_day, "daily: day1.train, day1.test, day2.train, ...")
    try:
        assert [kind.name for kind in registered_layouts()] == ["letor4", "letor3", "yahoo", "single", "daily"]
        layout = find_layout(tmp_path)
        assert layout.kind == "daily" and [s.name for s in layout.splits] == ["day1", "day2"]
        with pytest.raises(ValueError, match="registered already"):
            register_layout("daily", by_day, "")
        with pytest.raises(ValueError, match=r"  daily: day1\.train, day1\.test"):
            find_layout(_empty(tmp_path))
    finally:
        unregister_layout("daily")
    with pytest.raises(ValueError, match="no known dataset layout"):
        find_layout(tmp_path)


def _empty(tmp_path):
    directory = tmp_path / "empty"
    directory.mkdir()
    return directory
