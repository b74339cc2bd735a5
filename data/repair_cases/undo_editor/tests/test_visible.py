from editor import Editor


def test_undo_on_fresh_editor():
    e = Editor()
    e.undo()
    assert e.text == ""


def test_undo_last():
    e = Editor()
    e.type("a")
    e.type("b")
    e.undo()
    assert e.text == "a"


def test_type():
    e = Editor()
    e.type("x")
    assert e.text == "x"
