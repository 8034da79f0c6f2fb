from deskmate.tools.suggest import did_you_mean


def test_the_closest_names_in_order_joined_as_asked():
    assert did_you_mean("contxt", ["context", "model"]) == "did you mean 'context'?"
    assert did_you_mean("gti", ["git", "gt", "gitx"], n=3, joiner=", ") == \
        "did you mean 'gt', 'git'?"


def test_nothing_close_enough_says_nothing():
    assert did_you_mean("zzz", ["context", "model"]) == ""
    # a lower cutoff lets a looser match through
    assert did_you_mean("mdl", ["model"], cutoff=0.9) == ""
    assert did_you_mean("mdl", ["model"], cutoff=0.5) == "did you mean 'model'?"
