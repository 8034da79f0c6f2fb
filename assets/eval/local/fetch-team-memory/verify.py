from helpers import people_in_memory


def verify(workspace, answer):
    return people_in_memory(workspace, {
        "Nadia Haddad": "engineering manager",
        "Owen Price": "site reliability engineer",
        "Sofia Marin": "product designer",
    })
