# A second, harder set of dev questions for books/sun-tzu_the-art-of-war_lionel-giles.epub.
# Passages drawn at random (seed 20261203; 6 from Giles's introduction, 7 from the thirteen
# chapters, 7 from the endnotes that quote the commentators, each pool cut in equal shares by
# characters; see bench/dev-extra/README.md) and the questions written blind - before any
# search was run on them - in a reader's own words. Built with
# ../shared/bench/tools/build_epub_questions.py.
# Q = [(question, answers, evidence, chapter, section_or_None)]

Q = [
    # Giles's introduction
    ("What did Giles think of the old French translation of Sun Tzu made by a Jesuit missionary?",
     ["Amiot's version is little better than an imposture: much Sun Tzu never wrote, little "
      "of what he did"],
     "is seen at once to be little better than an imposture",
     "Preface by Lionel Giles", None),
    ("Is there any record that Sun Tzu wrote more than the thirteen chapters we have today?",
     ["the Han Shu bibliography lists works of Sun Tzu of Wu in 82 chapters with 9 books of "
      "diagrams"],
     "this cannot be merely the 13 chapters known to",
     "Sun Wu and His Book", None),
    ("How does Giles explain how the story arose that Sun Tzu was a great general who won "
     "famous campaigns?",
     ["the book's growing fame gradually lent its author a factitious renown, so he was "
      "identified with the capture of Ying"],
     "the growing celebrity of the book imparted by degrees a kind of factitious renown",
     "Sun Wu and His Book", None),
    ("Which printing of the Chinese text did Giles work from?",
     ["a reissue dated 1877, in 6 pên, part of a set of 23 early philosophical works"],
     "The copy which I have used belongs to a reissue dated 1877",
     "The Text of Sun Tzǔ", None),
    ("How did Chinese defenders of war argue that fighting is simply natural?",
     ["every animal with blood and horns fights when attacked; man, with love, hatred, joy and "
      "anger, all the more"],
     "Every animal with blood in its veins and horns on its head will fight",
     "Apologies for War", None),
    ("How do the defenders of war explain Confucius saying he knew nothing about military "
     "matters?",
     ["it means there are things even an inspired teacher does not know; with a good general "
      "one need not learn war oneself"],
     "there are things which even an inspired Teacher does not know",
     "Apologies for War", None),
    # the thirteen chapters
    ("What is the first question to ask when comparing two rulers before a war?",
     ["which of the two sovereigns is imbued with the Moral Law"],
     "Which of the two sovereigns is imbued with the Moral law",
     "I: Laying Plans", None),
    ("How can a general control a huge army as easily as a handful of men?",
     ["by dividing up their numbers: the same principle as controlling a few men"],
     "it is merely a question of dividing up their numbers",
     "V: Energy", None),
    ("What happens to an army that loses its supply train?",
     ["without its baggage-train, provisions or bases of supply an army is lost"],
     "an army without its baggage-train is lost; without provisions it is lost",
     "VII: Manoeuvring", None),
    ("What should you do about dangerous terrain like steep ravines and deep hollows, with "
     "respect to the enemy?",
     ["keep away from such places but get the enemy to approach them, and have them on his rear"],
     "While we keep away from such places, we should get the enemy to approach them",
     "IX: The Army on the March", None),
    ("What happens if you throw your army against an enemy that vastly outnumbers you?",
     ["against a force ten times its size, the result is flight"],
     "ten times its size, the result will be the flight of the former",
     "X: Terrain", None),
    ("What kind of ground is it when you have only gone a little way into enemy country?",
     ["facile ground"],
     "When you penetrate but a little way, it is facile ground",
     "XI: The Nine Situations", None),
    ("What happens when all the different kinds of spies are used at the same time?",
     ["no one can discover the secret system: the 'divine manipulation of the threads'"],
     "When these five kinds of spy are all at work, none can discover the secret system",
     "XIII: The Use of Spies", None),
    # the endnotes (Giles quoting and discussing the commentators)
    ("Which Chinese editor of Sun Tzu claimed to descend from Sun Tzu himself?",
     ["Sun Hsing-yen: his family came from Lo-an and descended from Sun Tzu; he read his "
      "ancestor's work only as literature"],
     "I only read my ancestor’s work from a literary point of view",
     "Endnotes", None),
    ("In the commentators' table of army units, how many men make up an army corps?",
     ["3200 men"],
     "or army corps thus works out at 3200 men",
     "Endnotes", None),
    ("What tricks do the commentators suggest for making the enemy believe you are stronger "
     "than you are?",
     ["a hollow display of campfires and regimental banners (Li Ch'üan)"],
     "making a hollow display of campfires and regimental banners",
     "Endnotes", None),
    ("Why does Giles reject the standard text's extra word for 'deceitful' in the passage on the "
     "enemy's humble or violent language?",
     ["language meant to deceive cannot be known as deceitful at the time, so it gives no sign; "
      "it also spoils the parallelism"],
     "cannot be known as deceitful at the time",
     "Endnotes", None),
    ("Why did a soldier's mother weep when the general himself treated her son's sore?",
     ["Wu Ch'i had done the same for her husband, who then fought to the death for him; she "
      "expected her son to die too"],
     "The soldier’s mother, hearing this, began wailing and lamenting",
     "Endnotes", None),
    ("What was the trick with the red flags in Han Hsin's battle against the army of Chao?",
     ["2000 light cavalry, each with a red flag, were to rush the abandoned Chao camp and put up "
      "the Han banners"],
     "every man of which was furnished with a red flag",
     "Endnotes", None),
    ("According to the commentators, what becomes of the 'doomed spies' in the end?",
     ["they are fed false information, captured by the enemy, give a false report and are put "
      "to death"],
     "The spies will thereupon be put to death",
     "Endnotes", None),
]
