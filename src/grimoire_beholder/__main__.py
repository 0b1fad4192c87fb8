"""``python -m grimoire_beholder``: the same CLI as the ``grimoire-beholder`` script."""

from grimoire_beholder.cli.entry import main

if __name__ == "__main__":
    main()
