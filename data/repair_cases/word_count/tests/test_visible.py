from wordcount import word_count


def test_punctuation_and_case():
    assert word_count("Hello, hello!") == {"hello": 2}


def test_empty():
    assert word_count("") == {}
