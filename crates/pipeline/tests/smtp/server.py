"""An SMTP server on 127.0.0.1 for copyhound's tests (tests/common/smtp.rs starts it).

Usage: server.py MODE OUT_DIR [CERT KEY]

MODE is what the server does:
  accept    aiosmtpd takes every message and writes it to OUT_DIR: N.eml, the bytes as
            received; N.json, the envelope (sender, recipients, whether the session was
            TLS) and the message read by Python's email package (its headers decoded, each
            part's type, file name and text); N.<file name> for each attachment
  starttls  as accept, but STARTTLS is required before MAIL (CERT and KEY are its PEM files)
  refuse    aiosmtpd refuses every message after DATA with 550
  stall     accepts the connection and never says a word
  drop      greets and answers as a server would, then closes the connection without a
            reply once the message's final dot arrives

It binds port 0, prints "READY <port>" on standard output and serves until standard input
closes (the test dropped it), so a test that dies leaves no server behind.
"""

import asyncio
import email
import email.policy
import json
import os
import ssl
import sys

from aiosmtpd.smtp import SMTP


class Save:
    def __init__(self, out, refuse):
        self.out = out
        self.refuse = refuse
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        if self.refuse:
            return "550 5.7.1 Message refused by policy"
        self.count += 1
        base = os.path.join(self.out, str(self.count))
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content)
        message = email.message_from_bytes(
            envelope.original_content, policy=email.policy.default
        )
        parts = []
        for part in message.walk():
            if part.is_multipart():
                parts.append({"type": part.get_content_type()})
                continue
            name = part.get_filename()
            entry = {"type": part.get_content_type(), "filename": name}
            if name:
                with open("%s.%s" % (base, os.path.basename(name)), "wb") as f:
                    f.write(part.get_content())
            else:
                entry["text"] = part.get_content()
            parts.append(entry)
        with open(base + ".json", "w") as f:
            json.dump(
                {
                    "mail_from": envelope.mail_from,
                    "rcpt_tos": envelope.rcpt_tos,
                    "tls": session.ssl is not None,
                    "headers": {k.lower(): str(v) for k, v in message.items()},
                    "parts": parts,
                },
                f,
                ensure_ascii=False,
            )
        # The .eml appears whole: the test waits for it.
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 2.0.0 Ok: queued as TEST%d" % self.count


async def stall(reader, writer):
    await reader.read()
    writer.close()


async def drop(reader, writer):
    writer.write(b"220 drop.test ESMTP\r\n")
    in_data = False
    while True:
        line = await reader.readline()
        if not line:
            break
        if in_data:
            if line == b".\r\n":
                break
            continue
        verb = line[:4].upper()
        if verb == b"EHLO":
            writer.write(b"250-drop.test\r\n250 8BITMIME\r\n")
        elif verb == b"DATA":
            writer.write(b"354 go ahead\r\n")
            in_data = True
        elif verb == b"QUIT":
            writer.write(b"221 bye\r\n")
            break
        else:
            writer.write(b"250 Ok\r\n")
        await writer.drain()
    writer.close()


async def main():
    mode, out = sys.argv[1], sys.argv[2]
    loop = asyncio.get_running_loop()
    if mode == "stall":
        server = await asyncio.start_server(stall, "127.0.0.1", 0)
    elif mode == "drop":
        server = await asyncio.start_server(drop, "127.0.0.1", 0)
    else:
        handler = Save(out, refuse=(mode == "refuse"))
        kwargs = {}
        if mode == "starttls":
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(sys.argv[3], sys.argv[4])
            kwargs = {"tls_context": context, "require_starttls": True}
        server = await loop.create_server(
            lambda: SMTP(handler, hostname="smtp.test", **kwargs), "127.0.0.1", 0
        )
    port = server.sockets[0].getsockname()[1]
    print("READY %d" % port, flush=True)
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    await stdin.read()
    server.close()


asyncio.run(main())
