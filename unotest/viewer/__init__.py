"""``unotest view``: the viewer server (Starlette on uvicorn, in one asyncio process).

Route modules each expose ``routes(ctx) -> list[BaseRoute]``; ``app.build_app`` joins
them behind the security middleware. Runs are separate processes the server spawns
through the engine (``runner.launch.launcher``); Playwright never runs in the server.
"""
