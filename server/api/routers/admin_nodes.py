"""The back office's nodes: each node of the cardroom with its tables and load, and draining
one before its maintenance.

Staff read the list; operators drain and undrain. A node told to drain moves its tables to the
others between hands (no hand voided, no chip moved, the players' clients following as on a
takeover), takes no new table, and then reports ``drained``: it may be stopped. Either order is
audited (``node.drain``, ``node.undrain``); each table moved, by the node that takes it
(``table.move``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from server.accounts import audit_log
from server.api.deps import (
    CardroomDep,
    OperatorUser,
    SessionDep,
    StaffUser,
    known_query_only,
    staff_only,
)
from server.api.schemas import NodePublic, OperatorReason

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)

NodeId = Annotated[str, Path(min_length=1, max_length=64, description="the node's id")]


@router.get("/nodes")
async def list_nodes(_staff: StaffUser, cardroom: CardroomDep) -> list[NodePublic]:
    """Every node heard within a lease, by id: its tables and load, draining or not."""
    return [NodePublic.model_validate(report) for report in cardroom.node_reports()]


async def _drain(
    node_id: str,
    draining: bool,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> NodePublic:
    report = await cardroom.drain_node(node_id, draining=draining)
    await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.NODE_DRAIN if draining else audit_log.AuditAction.NODE_UNDRAIN,
        target_kind="node",
        target_id=node_id,
        after={"draining": report.draining, "tables": report.tables},
        reason=body.reason,
    )
    await session.commit()
    return NodePublic.model_validate(report)


@router.post("/nodes/{node_id}/drain")
async def drain_node(
    node_id: NodeId,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> NodePublic:
    """Move the node's tables to the others between hands, and give it no new one; it
    reports ``drained`` once it runs none. ``unknown_node`` for a node not heard within a
    lease. Audited (``node.drain``)."""
    return await _drain(node_id, True, body, operator, session, cardroom)


@router.post("/nodes/{node_id}/undrain")
async def undrain_node(
    node_id: NodeId,
    body: OperatorReason,
    operator: OperatorUser,
    session: SessionDep,
    cardroom: CardroomDep,
) -> NodePublic:
    """The node takes tables again (those it gave away stay where they went, until the
    nodes even out). Audited (``node.undrain``)."""
    return await _drain(node_id, False, body, operator, session, cardroom)
