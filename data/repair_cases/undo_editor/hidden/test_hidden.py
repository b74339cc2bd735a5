from editor import Editor


def test_extra_undos():
    e = Editor()
    e.type("a")
    for _ in range(3):
        e.undo()
    e.type("b")
    assert e.text == "b"


def test_undo_everything():
    e = Editor()
    for s in "abc":
        e.type(s)
    for _ in range(3):
        e.undo()
    assert e.text == ""
