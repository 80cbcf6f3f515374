"""Start and follow agent-followup's workflow from Python, by its type name (docs/STARTING-FROM-OTHER-LANGUAGES.md).

Each command prints one JSON object. Run it against a worker of agent-followup:

    python follow_up.py start --project acme --job web-107 --prompt "Also update the changelog."
    python follow_up.py progress agent-followup/acme/web-107/<digest>
    python follow_up.py poll-now agent-followup/acme/web-107/<digest>
    python follow_up.py result agent-followup/acme/web-107/<digest>
    python follow_up.py cancel agent-followup/acme/web-107/<digest>
    python follow_up.py schedule --project acme --job web-107 --prompt "Rebase on main." --every-minutes 60

TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE select the server, TEMPORAL_TASK_QUEUE the workers' queue.
"""

import argparse
import asyncio
import hashlib
import json
import os
import sys
from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    ScheduleSpec,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, CancelledError, WorkflowAlreadyStartedError

WORKFLOW_TYPE = "followUpWorkflow"
# How a failure type reads as the way the follow-up ended; other types are "rejected" when not retryable, else "error".
KINDS = {"InvalidFollowUpInput": "invalid-input", "FollowUpTimedOut": "timed-out", "FollowUpDeliveryUnknown": "delivery-unknown"}


def default_id(project_id: str, job_id: str, prompt: str) -> str:
    """The id the TypeScript client gives the same input: a retried start attaches instead of sending twice."""
    tuple_json = json.dumps([project_id, job_id, prompt], ensure_ascii=False, separators=(",", ":"))
    return f"agent-followup/{project_id}/{job_id}/{hashlib.sha256(tuple_json.encode()).hexdigest()[:16]}"


def follow_up_input(args: argparse.Namespace) -> dict:
    """The workflow's one argument (docs/json/workflow/input.schema.json); the workflow checks it again."""
    value = {"projectId": args.project, "jobId": args.job, "prompt": args.prompt}
    if args.polling:
        value["polling"] = json.loads(args.polling)
    if args.extra:
        value.update(json.loads(args.extra))
    return value


def failure_of(error: WorkflowFailureError) -> dict:
    """The follow-up's failure type: the innermost ApplicationError's (docs/json/workflow/failure-types.schema.json)."""
    cause = error.cause
    if isinstance(cause, CancelledError):
        return {"kind": "cancelled", "type": "Cancelled", "message": str(cause)}
    application = None
    while cause is not None:
        if isinstance(cause, ApplicationError):
            application = cause
        cause = cause.__cause__
    if application is None:
        return {"kind": "error", "type": None, "message": str(error.cause)}
    kind = KINDS.get(application.type, "rejected" if application.non_retryable else "error")
    return {"kind": kind, "type": application.type, "message": application.message}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("start", "schedule"):
        command = commands.add_parser(name)
        command.add_argument("--project", required=True)
        command.add_argument("--job", required=True)
        command.add_argument("--prompt", required=True)
        command.add_argument("--polling", help='polling options as JSON, e.g. {"initialInterval": "10s"}')
        command.add_argument("--extra", help="more input fields as JSON (to try the workflow's own check)")
        if name == "schedule":
            command.add_argument("--every-minutes", type=int, default=60)
    for name in ("progress", "poll-now", "result", "cancel"):
        commands.add_parser(name).add_argument("workflow_id")
    args = parser.parse_args()

    client = await Client.connect(
        os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"),
        namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
    )
    task_queue = os.environ.get("TEMPORAL_TASK_QUEUE", "agent-followup")

    if args.command == "start":
        workflow_id = default_id(args.project, args.job, args.prompt)
        try:
            handle = await client.start_workflow(
                WORKFLOW_TYPE,
                follow_up_input(args),
                id=workflow_id,
                task_queue=task_queue,
                # As the TypeScript client does: a start repeated while the follow-up runs attaches to it, and one
                # that completed is not sent again (one that failed, timed out or was cancelled may be).
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            )
        except WorkflowAlreadyStartedError:
            print(json.dumps({"workflowId": workflow_id, "runId": None, "alreadyCompleted": True}))
        else:
            print(json.dumps({"workflowId": handle.id, "runId": handle.result_run_id, "alreadyCompleted": False}))
    elif args.command == "schedule":
        schedule_id = f"agent-followup-schedule/{args.project}/{args.job}/python"
        await client.create_schedule(
            schedule_id,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    WORKFLOW_TYPE,
                    follow_up_input(args),
                    id=f"agent-followup/{args.project}/{args.job}/scheduled",
                    task_queue=task_queue,
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(minutes=args.every_minutes))]),
            ),
        )
        print(json.dumps({"scheduleId": schedule_id}))
    else:
        handle = client.get_workflow_handle(args.workflow_id)
        if args.command == "progress":
            print(json.dumps(await handle.query("progress")))
        elif args.command == "poll-now":
            try:
                asked = await handle.execute_update("pollNow")
                print(json.dumps({"requested": True, "readAtMs": asked["readAtMs"], "covered": False}))
            except WorkflowUpdateFailedError as error:
                # Refused, writing nothing, when a read asked for before is still due: that read covers this ask.
                cause = error.cause
                if not (isinstance(cause, ApplicationError) and cause.type == "PollNowCovered"):
                    raise
                print(json.dumps({"requested": True, "readAtMs": cause.details[0]["readAtMs"], "covered": True}))
        elif args.command == "result":
            try:
                result = await handle.result()
                print(json.dumps({"kind": result["outcome"], "prLink": result["prLink"], "result": result}))
            except WorkflowFailureError as error:
                print(json.dumps(failure_of(error)))
        elif args.command == "cancel":
            await handle.cancel()
            print(json.dumps({"requested": True}))


if __name__ == "__main__":
    asyncio.run(main())
    # The SDK's Rust threads can outlive the event loop and crash a short-lived process while Python finalizes
    # ("PyGILState_Release ... must be current", SIGABRT; temporalio/sdk-python#300): skip the finalizing, its
    # output flushed first.
    sys.stdout.flush()
    os._exit(0)
