"""An example function in Python: tasks/hello-world.json (CallListCallConfig, `callList: [["ct2"],
["blockx"]]`) calls it once per inner array, so the task's result is ["hello, ct2", "hello, blockx"].
A Python function is a module-level `main(ctx, *args)`, plain or `async def`.
"""


async def main(ctx, name):
    ctx.log.debug("greeting", {"name": name})
    return "hello, %s" % name
