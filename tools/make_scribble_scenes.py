"""Write the scribbles and reference masks of the coffee and astronaut scenes
(``graphclust/data/{coffee,astronaut}_{scribbles,mask}.png``, read by
:func:`graphclust.datasets.load_scribble_scene`).

The reference masks are drawn by hand from shapes placed by eye on scikit-image's
pictures and checked by eye on overlays (``--check DIR`` writes them):

* coffee (400 x 600): foreground = cup, saucer and spoon. The saucer is an ellipse
  (centre row 229, col 279, radii 162 x 204, rotated by -0.15 rad), the cup's rim an
  ellipse (centre 112, 290, radii 95 x 118) and the spoon handle above the saucer a
  five-point polygon. The saucer's outline is followed within about 2-4 pixels.
* astronaut (512 x 512): foreground = the person (hair, face, neck, collar ring, suit,
  glove); background = flag, wall, shuttle model, black stand and the helmet in front
  of her. A 46-point polygon traced along her outline; hair strands and the
  neck-collar gaps are followed only to about 3-6 pixels.

Scribbles are straight strokes 3 pixels wide (label 2 foreground, 1 background), as a
user would draw them with a small brush, none crossing the reference boundary.

    python tools/make_scribble_scenes.py [--check DIR]
"""

import argparse
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "graphclust" / "data"

ASTRONAUT_OUTLINE = [  # (col, row)
    (225, 14), (255, 18), (280, 30), (296, 50), (301, 75), (298, 100), (290, 116), (272, 128),
    (262, 142), (262, 150), (275, 155), (292, 172), (302, 195), (305, 215), (303, 245), (292, 268), (320, 272),
    (345, 285), (356, 305), (362, 345), (345, 355), (318, 375), (298, 400), (286, 430), (278, 470),
    (276, 512), (22, 512), (20, 450), (22, 380), (28, 330), (36, 292), (52, 262), (72, 240), (96, 222),
    (114, 210), (118, 185), (135, 163), (160, 152), (186, 150), (186, 138), (172, 122), (160, 108),
    (153, 88), (152, 65), (160, 40), (185, 22)]

COFFEE_FG = [((230, 150), (340, 150)), ((120, 250), (150, 330)), ((200, 230), (300, 240)), ((350, 280), (380, 300)),
             ((300, 330), (420, 300))]
COFFEE_BG = [((20, 150), (60, 330)), ((520, 100), (560, 350)), ((150, 397), (450, 397)), ((30, 30), (130, 20)),
             ((450, 20), (590, 40))]
ASTRO_FG = [((200, 100), (250, 110)), ((80, 350), (120, 470)), ((200, 300), (220, 450)), ((200, 40), (270, 45)),
            ((300, 300), (330, 330)), ((150, 200), (250, 260))]
ASTRO_BG = [((30, 100), (50, 250)), ((330, 100), (345, 200)), ((400, 150), (405, 230)), ((400, 300), (480, 300)),
            ((350, 420), (450, 450)), ((70, 20), (140, 10)), ((320, 20), (370, 60))]


def coffee_mask():
    from skimage.draw import ellipse, polygon

    m = np.zeros((400, 600), bool)
    m[ellipse(229, 279, 162, 204, shape=m.shape, rotation=-0.15)] = True  # saucer
    m[ellipse(112, 290, 95, 118, shape=m.shape)] = True  # cup rim
    r, c = polygon([140, 72, 66, 72, 140], [398, 405, 415, 424, 410], shape=m.shape)  # spoon handle
    m[r, c] = True
    return m


def astronaut_mask():
    from skimage.draw import polygon

    x, y = np.array(ASTRONAUT_OUTLINE).T
    m = np.zeros((512, 512), bool)
    r, c = polygon(y, x, shape=m.shape)
    m[r, c] = True
    return m


def strokes(shape, fg, bg):
    from skimage.draw import line
    from skimage.morphology import dilation, disk

    s = np.zeros(shape, np.uint8)
    for lab, segments in ((2, fg), (1, bg)):
        for (x0, y0), (x1, y1) in segments:
            r, c = line(y0, x0, y1, x1)
            s[r, c] = lab
    return np.where(s > 0, s, dilation(s, disk(1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", help="folder for overlays to check the masks by eye")
    args = ap.parse_args()
    import skimage.data
    from PIL import Image

    for name, img, mask, fg, bg in (("coffee", skimage.data.coffee(), coffee_mask(), COFFEE_FG, COFFEE_BG),
                                    ("astronaut", skimage.data.astronaut(), astronaut_mask(), ASTRO_FG, ASTRO_BG)):
        s = strokes(mask.shape, fg, bg)
        wrong = int(((s == 2) & ~mask | (s == 1) & mask).sum())
        assert wrong == 0, f"{name}: {wrong} scribbled pixels across the reference boundary"
        Image.fromarray(s).save(DATA / f"{name}_scribbles.png", optimize=True)
        Image.fromarray(mask.astype(np.uint8)).save(DATA / f"{name}_mask.png", optimize=True)
        if args.check:
            out = img.astype(float) / 255
            out[~mask] *= 0.45
            out[s == 2], out[s == 1] = [1, 1, 0], [0, 0.6, 1]
            Image.fromarray((out * 255).astype(np.uint8)).save(Path(args.check) / f"{name}_check.png")
        print(name, "background", int((s == 1).sum()), "foreground", int((s == 2).sum()), "scribbled pixels")


if __name__ == "__main__":
    main()
