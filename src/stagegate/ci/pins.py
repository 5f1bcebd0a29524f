"""The release commits of the artifact actions, for a commit pin with no version comment.

``actions/upload-artifact@0b7f8abb...`` runs the code of one commit; where that commit is
a release of the action (a tag), its version is known exactly: the tag names it. Read
off each repository's tags (``git show-ref -d --tags``, an annotated tag's commit; a
commit with several tags takes the longest, highest: ``v4`` and ``v4.6.2`` on one commit
is 4.6.2), every ``vX[.Y[.Z]]`` tag and its ``-node20`` variant. A commit that is no
release (a branch head, a fork) is not here: its version stays unknown, as before.
Taken from actions/upload-artifact up to v7.0.0 and actions/download-artifact up to
v8.0.1.
"""

from __future__ import annotations

RELEASES: dict[str, dict[str, tuple[int, ...]]] = {
    "actions/download-artifact": {
        "18f0f591fbc635562c815484d73b6e8e3980482e": (1, 0, 0),
        "1de1dea89c32dcb1f37183c96fe85cfe067b682a": (2, 0),
        "1ac47ba4b6af92e65d0438b64ce1ea49ce1cc48d": (2, 0, 1),
        "381af06b4268a1e0ad7b7c7e5a09f1894977120f": (2, 0, 2),
        "80d2d4023c185001eacb50e37afd7dd667ba8044": (2, 0, 3),
        "b3cedea9bed36890c824f4065163b667eeca272b": (2, 0, 4),
        "c3f5d00c8784369c43779f3d2611769594a61f7a": (2, 0, 5),
        "f8e41fbffeebb48c0273438d220bb2387727471f": (2, 0, 6),
        "f144d3c3916a86f4d6b11ff379d17a49d8f85dbc": (2, 0, 7),
        "4a7a711286f30c025902c28b541c10e147a9b843": (2, 0, 8),
        "158ca71f7c614ae705e79f25522ef4658df18253": (2, 0, 9),
        "3be87be14a055c47b01d3bd88f8fe02320a9bb60": (2, 0, 10),
        "f023be2c48cc18debc3bacd34cb396e0295e2869": (2, 1, 0),
        "cbed621e49e4c01b044d60f6c80ea4ed6328b281": (2, 1, 1),
        "246d7188e736d3686f6d19628d253ede9697bd55": (3,),
        "fb598a63ae348fa914e94cd0ff38f362e927b741": (3, 0, 0),
        "9782bd6a9848b53b110e712e20e42d89988822b7": (3, 0, 1),
        "9bc31d5ccc31df68ecc42ccf4149144866c47d8a": (3, 0, 2),
        "a9bc5e6ef2cb54c177f32aa5726adaa15e7e2d59": (3, 1, 0),
        "ad191675b41f6a5b46da9a048cb6893812da158b": (3, 1, 0),
        "7a1cd3216ca9260cd8022db641d960b1db4d1be4": (4, 0, 0),
        "f44cd7b40bfd40b6aa1cc1b9b5b7bf03d3c67110": (4, 1, 0),
        "6b208ae046db98c579e8a3aa621ab581ff575935": (4, 1, 1),
        "eaceaf801fd36c7dee90939fad912460b18a1ffe": (4, 1, 2),
        "87c55149d96e628cc2ef7e6fc2aab372015aec85": (4, 1, 3),
        "c850b930e6ba138125429b7e5c93fc707a7f8427": (4, 1, 4),
        "8caf195ad4b1dee92908e23f56eeb0696f1dd42d": (4, 1, 5),
        "9c19ed7fe5d278cd354c7dfd5d3b88589c7e2395": (4, 1, 6),
        "65a9edc5881444af0b9093a5e628f2fe47ea3b2e": (4, 1, 7),
        "fa0a91b85d4f404e444e00e005971372dc801d16": (4, 1, 8),
        "cc203385981b70ca67e1cc392babf9cc229d5806": (4, 1, 9),
        "b14cf4c92620c250e1c074ab0a5800e37df86765": (4, 2, 0),
        "95815c38cf2ff2164869cbab79da8d1f422bc89e": (4, 2, 1),
        "d3f86a106a0bac45b974a628896c90dbdf5c8093": (4, 3, 0),
        "634f93cb2916e3fdff6788551b99b062d0335ce0": (5, 0, 0),
        "018cc2cf5baa6db3ef3c5f8a56943fffe632ef53": (6, 0, 0),
        "37930b1c2abaa49bbe596cd826c3c89aef350131": (7, 0, 0),
        "70fc10c6e5e1ce46ad2ea6f2b72d43f7d47b13c3": (8, 0, 0),
        "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c": (8, 0, 1),
    },
    "actions/upload-artifact": {
        "3446296876d12d4e3a0f3145a3c87e67bf0a16b5": (1, 0, 0),
        "97b7dace6c8d860ce9708aba808be6a2ee4cbc3a": (2, 0, 1),
        "ebad382c0953e8c6b4039e8d30dfd19ee7b2a862": (2, 1, 0),
        "5f948bc1f0a251f88bb4c9b1c3dfa6cbd1327dc5": (2, 1, 1),
        "c8879bf5aef7bef66f9b82b197f34c4eeeb1731b": (2, 1, 2),
        "268d7547644ab8a9d0c1163299e59a1f5d93f39b": (2, 1, 3),
        "58740802ef971a2d71eff71e63d48ab68d1f5507": (2, 1, 4),
        "27bce4eee761b5bc643f46a8dfb41b430c8d05f6": (2, 2, 0),
        "726a6dcd0199f578459862705eed35cda05af50b": (2, 2, 1),
        "e448a9b857ee2131e752b06002bf0e093c65e571": (2, 2, 2),
        "ee69f02b3dfdecd58bb31b4d133da38ba6fe3700": (2, 2, 3),
        "27121b0bdffd731efa15d66772be8dc71245d074": (2, 2, 4),
        "da838ae9595ac94171fa2d4de5a2f117b3e7ac32": (2, 3, 0),
        "82c141cc518b40d92cc801eee768e7aafc9c2fa2": (2, 3, 1),
        "6673cd052c4cd6fcf4b4e6e60ea986c889389535": (3, 0, 0),
        "3cea5372237819ed00197afe530f5a7ea3e805c8": (3, 1, 0),
        "83fd05a356d7e2593de66fc9913b3002723633cb": (3, 1, 1),
        "0b7f8abb1508181956e8e162db84b466c27e18ce": (3, 1, 2),
        "a8a3f3ad30e3422c9c7b888a15615d19a852ae32": (3, 1, 3),
        "672174a5bad8453f715436e010047cb8fa7680be": (3, 2, 0),
        "9ee08a3b00e91a926cc9547dc79589c20872452f": (3, 2, 0),
        "c24449f33cd45d4826c6702db7e49f7cdb9b551d": (3, 2, 1),
        "ff15f0306b3f739f7b6fd43fb5d26cd321bd4de5": (3, 2, 1),
        "c7d193f32edcb7bfad88892161225aeda64e9392": (4, 0, 0),
        "1eb3cb2b3e0f29609092a73eb033bb759a334595": (4, 1, 0),
        "694cdabd8bdb0f10b2cea11669e1bf5453eed0a6": (4, 2, 0),
        "26f96dfa697d77e81fd5907df203aa23a56210a8": (4, 3, 0),
        "5d5d22a31266ced268874388b861e4b58bb5c2f3": (4, 3, 1),
        "1746f4ab65b179e0ea60a494b83293b640dd5bba": (4, 3, 2),
        "65462800fd760344b1a7b4382951275a0abb4808": (4, 3, 3),
        "0b2256b8c012f0828dc542b3febcab082c67f72b": (4, 3, 4),
        "89ef406dd8d7e03cfd12d9e0a4a378f454709029": (4, 3, 5),
        "834a144ee995460fba8ed112a2fc961b36a5ec5a": (4, 3, 6),
        "50769540e7f4bd5e21e526ee35c689e35e0d6874": (4, 4, 0),
        "604373da6381bf24206979c74d06a550515601b9": (4, 4, 1),
        "84480863f228bb9747b473957fcc9e309aa96097": (4, 4, 2),
        "b4b15b8c7c6ac21ea08fcf65892d2ee8f75cf882": (4, 4, 3),
        "6f51ac03b9356f520e9adb1b1b7802705f340c2b": (4, 5, 0),
        "65c4c4a1ddee5b72f698fdd19549f0f0fb45cf08": (4, 6, 0),
        "4cec3d8aa04e39d1a68397de0c4cd6fb9dce8ec1": (4, 6, 1),
        "ea165f8d65b6e75b540449e92b4886f43607fa02": (4, 6, 2),
        "330a01c490aca151604b8cf639adc76d48f6c5d4": (5, 0, 0),
        "b7c566a772e6b6bfb58ed0dc250532a479d7789f": (6, 0, 0),
        "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f": (7, 0, 0),
    },
}
"""action family (``owner/name``) -> release commit -> its version."""


def pin_version(family: str, commit: str) -> tuple[int, ...] | None:
    """The version of the release ``commit`` of the action ``family`` (None: not known)."""
    return RELEASES.get(family, {}).get(commit.lower())
