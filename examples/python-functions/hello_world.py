"""The README's sample function in Python (docs/functions.md, "Python functions"): a CallListCallConfig
task with `callList: [["ct2"], ["blockx"]]` calls it once per inner array, so it returns "hello, ct2" and
"hello, blockx", as functions/hello_world.ts does. Kept out of functions/: one name in two languages is a
load error.
"""


async def main(ctx, name):
    ctx.log.debug("greeting", {"name": name})
    return "hello, %s" % name
