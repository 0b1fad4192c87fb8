# A third blind set of dev questions for books/arthur-conan-doyle_the-adventures-of-sherlock-
# holmes.epub. Passages drawn at random (seed 20261204, one per twentieth of the twelve stories
# by characters, leaving out the paragraphs of books-extra.jsonl's and books-extra-2.jsonl's
# evidence; see bench/dev-extra/README.md) and the questions written blind - before any search
# was run on them - in a reader's own words. Built with
# ../shared/bench/tools/build_epub_questions.py.
# Q = [(question, answers, evidence, chapter, section_or_None)]

Q = [
    ("What did Watson see from the street that told him Holmes was busy on a case again?",
     ["Holmes's tall thin shadow pacing the lit room twice past the blind, head sunk, hands "
      "clasped behind him"],
     "I saw his tall, spare figure pass twice in a dark silhouette against the blind",
     "A Scandal in Bohemia", "I"),
    ("What cutting remark did Holmes make to the King about Irene Adler at the end?",
     ["that from what he had seen of her she seemed on a very different level to his Majesty"],
     "she seems, indeed, to be on a very different level to your Majesty",
     "A Scandal in Bohemia", "III"),
    ("Why was the day of the week a problem for stopping the crime at the pawnbroker's?",
     ["it was Saturday, which complicated matters; Holmes needed Watson's help that night"],
     "But today being Saturday rather complicates matters",
     "The Redheaded League", None),
    ("What was the woman in the street wearing as she hesitated outside Baker Street?",
     ["a heavy fur boa and a broad-brimmed hat with a large curling red feather, tilted over her "
      "ear"],
     "a large curling red feather in a broad-brimmed hat",
     "A Case of Identity", None),
    ("How did Holmes realise the missing fiancé was really the stepfather in disguise?",
     ["the two were never seen together, the tinted glasses, odd voice and whiskers hinted at a "
      "disguise, and the typewritten signature hid a handwriting she knew"],
     "the two men were never together, but that the one always appeared",
     "A Case of Identity", None),
    ("Why did young McCarthy go out to the pool with his gun that morning?",
     ["he meant to visit the rabbit warren on the other side of Boscombe Pool"],
     "with the intention of visiting the rabbit warren which is upon the other side",
     "The Boscombe Valley Mystery", None),
    ("Why was Holmes annoyed about the ground around the body at the pool?",
     ["the police party had trampled it like a herd of buffalo, covering the tracks for six or "
      "eight feet round the body"],
     "they have covered all tracks for six or eight feet round the body",
     "The Boscombe Valley Mystery", None),
    ("What did the nephew find in the fireplace and the brass box when the lawyer came?",
     ["a mass of black fluffy ashes of burned paper, and the box open and empty with the three "
      "K's on its lid"],
     "in the grate there was a mass of black, fluffy ashes, as of burned paper",
     "The Five Orange Pips", None),
    ("Was the missing man in the opium den case short of money?",
     ["no: his debts were £88 10s. and he had £220 in the Capital and Counties Bank"],
     "he has £220 standing to his credit in the Capital and Counties Bank",
     "The Man with the Twisted Lip", None),
    ("What made the beggar's face so ugly to look at?",
     ["an old scar from eye to chin that turned up his upper lip, showing three teeth in a "
      "permanent snarl, under a shock of red hair"],
     "so that three teeth were exposed in a perpetual snarl",
     "The Man with the Twisted Lip", None),
    ("Why did Holmes think the man who lost the goose would answer a newspaper advertisement?",
     ["he is poor, so the loss was heavy and he will watch the papers; and people who know him "
      "will point it out"],
     "to a poor man, the loss was a heavy one",
     "The Adventure of the Blue Carbuncle", None),
    ("How could Julia have been alone in a locked room when she died?",
     ["the door was fastened inside, the shutters barred, the walls solid, the floor sound and "
      "the chimney barred by four staples"],
     "The chimney is wide, but is barred up by four large staples",
     "The Adventure of the Speckled Band", None),
    ("How much money would each stepdaughter be owed if she married, and why did it matter?",
     ["£250 a year each out of under £750, so a marriage would cripple the stepfather: a strong "
      "motive"],
     "Each daughter can claim an income of £250, in case of marriage",
     "The Adventure of the Speckled Band", None),
    ("What did the colonel who hired the engineer look like?",
     ["exceedingly thin, face sharpened into nose and chin, but healthy-looking, plainly "
      "dressed, nearer forty than thirty"],
     "His whole face sharpened away into nose and chin",
     "The Adventure of the Engineer’s Thumb", None),
    ("How did the police inspector try to find the house where the engineer was attacked?",
     ["on the train he drew a circle centred on Eyford with compasses on an ordnance map"],
     "busy with his compasses drawing a circle with Eyford for its centre",
     "The Adventure of the Engineer’s Thumb", None),
    ("How did the bride's first husband get a message to her during the wedding?",
     ["she dropped her bouquet over to his pew and he slipped the note into her hand when he "
      "returned the flowers"],
     "As I passed his pew on the way out I dropped my bouquet",
     "The Adventure of the Noble Bachelor", None),
    ("What did the banker say was so crushing about his trouble when he arrived?",
     ["public disgrace and private affliction together, in a frightful form; the noblest in the "
      "land may suffer too"],
     "Public disgrace I might have faced, although I am a man whose character",
     "The Adventure of the Beryl Coronet", None),
    ("What path was outside the banker's grounds along the left side of his house?",
     ["a lane to the stables, a little-used public thoroughfare"],
     "being a public, though little used, thoroughfare",
     "The Adventure of the Beryl Coronet", None),
    ("What was the weather like on the way down to Winchester?",
     ["an ideal spring day: light blue sky with little white clouds, bright sun and an "
      "exhilarating nip in the air"],
     "It was an ideal spring day, a light blue sky",
     "The Adventure of the Copper Beeches", None),
    ("Why did Miss Alice's father make her ill, according to the servant?",
     ["he kept worrying her to sign a paper so he could use her money whether she married or "
      "not, until she got brain-fever"],
     "He wanted her to sign a paper, so that whether she married or not",
     "The Adventure of the Copper Beeches", None),
]
