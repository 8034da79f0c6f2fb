from helpers import people_in_memory


def verify(workspace, answer):
    return people_in_memory(workspace, {
        "Ingrid Berg": "backend developer",
        "Kofi Mensah": "data analyst",
        "Lucia Romero": "tech lead",
    })
