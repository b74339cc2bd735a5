from wordcount import word_count


def test_apostrophes():
    assert word_count("don't stop") == {"don't": 1, "stop": 1}


def test_mixed():
    assert word_count("A b a") == {"a": 2, "b": 1}


def test_sentence_punctuation():
    assert word_count("Stop. Stop!") == {"stop": 2}
