# A third blind set of dev questions for books/sun-tzu_the-art-of-war_lionel-giles.epub.
# Passages drawn at random (seed 20261204; 6 from Giles's introduction, 7 from the thirteen
# chapters, 7 from the endnotes that quote the commentators, each pool cut in equal shares by
# characters, leaving out the paragraphs of books-extra.jsonl's and books-extra-2.jsonl's
# evidence; see bench/dev-extra/README.md) and the questions written blind - before any search
# was run on them - in a reader's own words. Built with
# ../shared/bench/tools/build_epub_questions.py.
# Q = [(question, answers, evidence, chapter, section_or_None)]

Q = [
    # Giles's introduction
    ("In the story of drilling the king's concubines, who did Sun Tzu say was to blame when "
     "orders were clear but still not obeyed?",
     ["the officers: unclear orders are the general's fault, disobeyed clear orders the "
      "officers'"],
     "and the soldiers nevertheless disobey, then it is the fault of their officers",
     "Sun Wu and His Book", None),
    ("Is there an old preface to Sun Tzu from the end of the Han dynasty?",
     ["yes: the short preface Ts'ao Ts'ao (Wu Wei Ti) wrote for his edition, which Giles gives "
      "in full"],
     "An interesting document which has survived from the close of the Han period",
     "Sun Wu and His Book", None),
    ("Why does Giles reject the idea that the book was written by a scholar who had never been "
     "a soldier?",
     ["the maxims are plainly distilled from a large store of personal observation and "
      "experience, the mind of a practical soldier"],
     "their essence has been distilled from a large store of personal observation and experience",
     "Sun Wu and His Book", None),
    ("What is known about the commentator Li Ch'üan, and what kind of notes did he write?",
     ["an 8th-century writer on tactics, probably author of a Taoist tract; short notes, often "
      "illustrated with anecdotes from Chinese history"],
     "His notes are mostly short and to the point",
     "The Commentators", None),
    ("Were there other collections of commentaries on Sun Tzu that Giles could not get hold of?",
     ["two rare works in the Ssu K'u Ch'üan Shu: one with four new, probably Ming, commentators, "
      "and a compendium by Chêng Tuan"],
     "It gives selections from four new commentators, probably of the Ming dynasty",
     "The Commentators", None),
    ("Is the dialogue between Emperor T'ai Tsung and his general Li Ching genuine?",
     ["usually ascribed to Li Ching, but competent authorities think it a forgery by someone "
      "well versed in war"],
     "Competent authorities consider it a forgery, though the author was evidently well versed",
     "Bibliography", None),
    # the thirteen chapters
    ("How long does Sun Tzu reckon it takes to get ready to besiege a walled city?",
     ["three months to prepare mantlets, shelters and implements, and three more to pile up "
      "mounds against the walls"],
     "the piling up of mounds over against the walls will take three months more",
     "III: Attack by Stratagem", None),
    ("How do you get the enemy to move where you want him?",
     ["keep up deceitful appearances he will act on, and sacrifice something for him to snatch "
      "at"],
     "He sacrifices something, that the enemy may snatch at it",
     "V: Energy", None),
    ("Can an army that sets out later still arrive first?",
     ["yes: take a long roundabout route after luring the enemy away, the artifice of deviation"],
     "though starting after him, to contrive to reach the goal before him",
     "VII: Manoeuvring", None),
    ("Where should an army camp when it is on flat, dry ground?",
     ["an easily accessible position with rising ground to the right and rear, so danger is in "
      "front and safety behind"],
     "with rising ground to your right and on your rear",
     "IX: The Army on the March", None),
    ("Is knowing that the enemy can be attacked enough to win?",
     ["no: if you don't know whether your own men are fit to attack, you are only halfway to "
      "victory"],
     "are unaware that our own men are not in a condition to attack",
     "X: Terrain", None),
    ("What does a general do to his army once it is deep in enemy country, so that there is no "
     "turning back?",
     ["burns his boats, breaks his cooking-pots and drives his men like sheep, none knowing "
      "where they go"],
     "he drives his men this way and that, and none knows whither he is going",
     "XI: The Nine Situations", None),
    ("How many different outcomes should you be ready for when you attack with fire?",
     ["five possible developments"],
     "In attacking with fire, one should be prepared to meet five possible developments",
     "XII: The Attack by Fire", None),
    # the endnotes
    ("Why does Sun Tzu care so much about an enemy's allies?",
     ["China in his day was split into many states and principalities, so war always involved "
      "them; cut the enemy off from his allies"],
     "into which the China of his day was split up",
     "Endnotes", None),
    ("What image do the commentators use for a ruler who meddles with his army, and should the "
     "general stay among his troops in battle?",
     ["tying together the legs of a thoroughbred so it cannot gallop; the general should stand "
      "a little apart from his troops to see the whole"],
     "It is like tying together the legs of a thoroughbred",
     "Endnotes", None),
    ("Why did Ts'ao Kuei hold back his attack until the enemy had beaten their drums three "
     "times?",
     ["courage rises with the first roll of the drum, wanes with the second and is gone after "
      "the third: he attacked when theirs was gone"],
     "the second it is already on the wane, and after the third it is gone",
     "Endnotes", None),
    ("What underhand ways does a commentator list for harming an enemy state without fighting?",
     ["Chia Lin: entice away its wise men, plant traitors, sow dissension, corrupt the ruler "
      "with gifts and lovely women"],
     "Introduce traitors into his country, that the government policy may be rendered futile",
     "Endnotes", None),
    ("Did any commentator turn Sun Tzu's advice into a rhyme?",
     ["Mei Yao-ch'ên paraphrased the passage in a curious jingle rhymed abcbdd"],
     "paraphrases the passage in a curious jingle, the scheme of rhymes being",
     "Endnotes", None),
    ("What Greek story does Giles compare to tying up horses to keep soldiers from running away?",
     ["Sôphanes of Athens, who carried an anchor at Plataea to fasten himself to one spot"],
     "who carried an anchor with him at the battle of Plataea",
     "Endnotes", None),
    ("How does a warlike prince keep his soldiers loyal and obedient, in the quotation Tu Mu "
     "gives?",
     ["by authority, good faith and rewards; if faith decays there is disruption, if rewards "
      "fail commands are not respected"],
     "knits them together by good faith, and by rewards makes them serviceable",
     "Endnotes", None),
]
