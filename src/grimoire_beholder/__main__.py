"""``python -m grimoire_beholder``: the same CLI as the ``grimoire-beholder`` script."""

from grimoire_beholder.cli.entry import script

if __name__ == "__main__":
    script()
