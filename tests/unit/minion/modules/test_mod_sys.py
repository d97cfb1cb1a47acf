"""``sys`` module: listing functions and modules, reading docstrings."""

from __future__ import annotations


def test_list_functions(loader):
    funcs = loader["sys.list_functions"]()
    assert "test.ping" in funcs and "sys.doc" in funcs and funcs == sorted(funcs)
    assert loader["sys.list_functions"]("test.p") == []  # no glob: module name only
    assert "test.ping" in loader["sys.list_functions"]("test.p*")
    match_funcs = loader["sys.list_functions"]("match")
    assert "match.compound" in match_funcs and "match.list" in match_funcs
    assert all(f.startswith("match.") for f in match_funcs)
    assert loader["sys.list_functions"]("nosuchmod") == []


def test_list_modules(loader):
    mods = loader["sys.list_modules"]()
    assert {"test", "grains", "pillar", "cmd", "match", "sys"} <= set(mods)
    assert loader["sys.list_modules"]("grai*") == ["grains"]


def test_doc(loader):
    doc = loader["sys.doc"]("test.ping")
    assert list(doc) == ["test.ping"] and "True" in doc["test.ping"]
    assert loader["sys.doc"]("test.nope") == {}
    assert "grains.get" in loader["sys.doc"]("grains")
    assert set(loader["sys.doc"]("test.p*")) >= {"test.ping", "test.provider"}


def test_argspec(loader):
    assert loader["sys.argspec"]("test.echo")["test.echo"]["args"] == ["text"]


def test_doc_is_each_functions_own_docstring_unchanged(loader):
    import briny.minion.host.modules.test as test_module

    assert loader["sys.doc"]("test.ping") == {"test.ping": test_module.ping.__doc__}
    assert loader["sys.doc"]("test.version")["test.version"] == test_module.version.__doc__


def test_argspec_reports_as_salt(loader):
    assert loader["sys.argspec"]("test.arg") == {
        "test.arg": {"args": None, "defaults": None, "varargs": True, "kwargs": True}
    }
    spec = loader["sys.argspec"]("test.echo")["test.echo"]
    assert spec == {"args": ["text"], "defaults": None, "varargs": None, "kwargs": True}


def test_state_modules_functions_and_docs(loader):
    import briny.states.file as file_states
    import briny.states.test as test_states

    mods = loader["sys.list_state_modules"]()
    assert {"test", "file", "cmd", "pkg", "service"} <= set(mods) and mods == sorted(mods)
    assert loader["sys.list_state_modules"]("te*") == ["test"]
    funcs = loader["sys.list_state_functions"]("test")
    assert "test.succeed_without_changes" in funcs and all(f.startswith("test.") for f in funcs)
    assert "test.nop" in loader["sys.list_state_functions"]("test.n*")
    doc = loader["sys.state_doc"]("test.succeed_without_changes")
    assert doc == {
        "test": test_states.__doc__,
        "test.succeed_without_changes": test_states.succeed_without_changes.__doc__,
    }
    assert doc["test.succeed_without_changes"]  # a real docstring, not the loader's
    # a function a state module takes from a private file keeps its own docstring
    assert loader["sys.state_doc"]("file.append")["file.append"] == file_states.append.__doc__
    assert set(loader["sys.state_doc"]("test.s*")) >= {"test", "test.succeed_with_changes"}
    assert loader["sys.state_doc"]("nosuch") == {}
    assert loader["sys.state_argspec"]("test.nop") == {
        "test.nop": {"args": ["name"], "defaults": None, "varargs": None, "kwargs": True}
    }


def test_list_runners_reads_the_runners_briny_run_offers(loader):
    from briny.master.runners import list_functions, list_modules

    assert loader["sys.list_runners"]() == list_modules()
    assert {"cache", "doc", "jobs", "mine", "salt"} <= set(loader["sys.list_runners"]())
    assert loader["sys.list_runners"]("c*") == ["cache"]
    assert loader["sys.list_runners"]("jobs.list_e*") == ["jobs"]
    assert loader["sys.list_runners"]("mine", "nosuch") == ["mine"]
    every = [f for m in list_modules() for f in list_functions(m)]
    assert loader["sys.list_runner_functions"]() == sorted(every)
    assert loader["sys.list_runner_functions"]("cache") == ["cache.grains", "cache.mine", "cache.pillar"]
    assert loader["sys.list_runner_functions"]("state.orch") == ["state.orch"]
    orch = loader["sys.list_runner_functions"]("state.orch*")
    assert {"state.orch", "state.orchestrate", "state.orchestrate_single"} <= set(orch)
    assert all(f.startswith("state.orch") for f in orch)
