"""The share panel's QR code of the view's link (ui/share.py)."""

EN = {
    "share.qr_alt": "QR code of the link to this view",
    "share.qr_full": "🔳 Show the QR code full screen",
    "share.qr_full_help": "A large QR code and the link in large type, for the projector. Esc closes it.",
    "share.qr_title": "Scan to open this view",
    "share.qr_too_long": "This link is too long for a QR code ({n} bytes; one holds at most {max}): shorten the input text, or send the link itself.",
    "share.qr_local": "This link names {host}, which only the server's own machine can open: students' phones cannot. Open the app by the machine's network address (for example `http://192.168.1.20:8501/`) and show the code from there.",
}

ZH = {
    "share.qr_alt": "这个视图链接的二维码",
    "share.qr_full": "🔳 全屏显示二维码",
    "share.qr_full_help": "大号二维码和大字链接，供投影使用。按 Esc 关闭。",
    "share.qr_title": "扫码打开这个视图",
    "share.qr_too_long": "这个链接太长，无法生成二维码（{n} 字节；一个二维码最多容纳 {max} 字节）：请缩短输入文本，或直接发送链接。",
    "share.qr_local": "这个链接指向 {host}，只有服务器本机能打开，学生的手机打不开。请用这台机器的网络地址打开应用（例如 `http://192.168.1.20:8501/`），再从那里显示二维码。",
}
