class Editor:
    def __init__(self):
        self.text = ""
        self._undo = []

    def type(self, s):
        self._undo.append(self.text)
        self.text += s

    def undo(self):
        self.text = self._undo.pop()
