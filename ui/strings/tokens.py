"""Strings that name a token in a sentence (ui/tokens.py)."""

EN = {
    "tok.quoted": "“{text}”",
    "tok.bytes_of": "{n} of the {total} bytes of {char}",
    "tok.bytes_only": "the bytes {bytes}, no whole character",
    "tok.and": " and ",
}

ZH = {
    "tok.quoted": "“{text}”",
    "tok.bytes_of": "“{char}”的 {total} 个字节中的 {n} 个",
    "tok.bytes_only": "字节 {bytes}（不是完整的字符）",
    "tok.and": "加上",
}
