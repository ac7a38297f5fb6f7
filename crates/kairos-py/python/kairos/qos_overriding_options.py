"""rclpy's QoS overrides: a publisher or subscription created with
``qos_overriding_options=`` declares a read-only parameter per chosen policy,
``qos_overrides.<topic>.<publisher|subscription>[_<id>].<policy>``, whose value (from a
parameter file, ``-p`` or ``parameter_overrides``) replaces that policy of the profile the
code gave. So a deployment changes a topic's reliability or depth without a code change.

What this module promises:
- The parameter names, values and descriptors are rclpy's: policies as their lower-case
  names (``keep_last``, ``best_effort``), durations in nanoseconds, depth as an integer;
  a subscription never gets ``lifespan`` (a publisher's policy).
- A parameter already declared (a second entity on the topic) is read, not declared again.
- A value that names no policy is an ``InvalidQosOverridesError`` saying which parameter
  and what it may be, before the entity exists; so is a validation callback's refusal,
  with its reason.
"""

import copy

from kairos.duration import Duration
from kairos.exceptions import ParameterAlreadyDeclaredException
from kairos.qos import (DurabilityPolicy, HistoryPolicy, LivelinessPolicy, QoSPolicyKind,
                        QoSProfile, ReliabilityPolicy)
from kairos.rcl_interfaces.msg import ParameterDescriptor, SetParametersResult

__all__ = ["InvalidQosOverridesError", "QosCallbackResult", "QoSOverridingOptions",
           "QoSPolicyKind"]

# What a validation callback returns: ``successful`` and, when not, a ``reason``.
QosCallbackResult = SetParametersResult

_ENUM_POLICIES = {
    QoSPolicyKind.HISTORY: HistoryPolicy,
    QoSPolicyKind.RELIABILITY: ReliabilityPolicy,
    QoSPolicyKind.DURABILITY: DurabilityPolicy,
    QoSPolicyKind.LIVELINESS: LivelinessPolicy,
}
_DURATION_POLICIES = (QoSPolicyKind.LIFESPAN, QoSPolicyKind.DEADLINE,
                      QoSPolicyKind.LIVELINESS_LEASE_DURATION)
_DEFAULT_POLICIES = (QoSPolicyKind.HISTORY, QoSPolicyKind.DEPTH, QoSPolicyKind.RELIABILITY)


class InvalidQosOverridesError(Exception):
    """The overrides of an entity's QoS do not make a valid profile."""


class QoSOverridingOptions:
    """Which policies of an entity's profile parameters may override, an optional
    ``callback(qos) -> QosCallbackResult`` that validates the result, and an
    ``entity_id`` that tells apart two entities of one topic and kind."""

    def __init__(self, policy_kinds, *, callback=None, entity_id=None):
        self.policy_kinds = list(policy_kinds)
        self.callback = callback
        self.entity_id = entity_id

    @classmethod
    def with_default_policies(cls, *, callback=None, entity_id=None):
        """History, depth and reliability, as rclpy's default."""
        return cls(_DEFAULT_POLICIES, callback=callback, entity_id=entity_id)

    @property
    def policy_kinds(self):
        return self._policy_kinds

    @policy_kinds.setter
    def policy_kinds(self, value):
        self._policy_kinds = [QoSPolicyKind(kind) for kind in value]


def _entity_kind(entity_type):
    from kairos.publisher import Publisher
    from kairos.subscription import Subscription

    if isinstance(entity_type, str):
        return entity_type
    if issubclass(entity_type, Publisher):
        return "publisher"
    if issubclass(entity_type, Subscription):
        return "subscription"
    raise TypeError(f"QoS overrides are for publishers and subscriptions, not {entity_type!r}")


def _get_qos_policy_parameter(qos, policy):
    """The parameter value of ``policy`` in ``qos``."""
    value = getattr(qos, policy.name.lower())
    if policy in _ENUM_POLICIES:
        value = _ENUM_POLICIES[policy](value)
        if value.name == "UNKNOWN":
            raise ValueError(f"the profile's {policy.name.lower()} is UNKNOWN; "
                             "give it a policy it can be overridden from")
        return value.name.lower()
    if policy in _DURATION_POLICIES:
        return value.nanoseconds
    return value


def _override(qos, policy, parameter):
    name = policy.name.lower()
    value = parameter.value
    if policy in _ENUM_POLICIES:
        policy_class = _ENUM_POLICIES[policy]
        try:
            value = policy_class[str(value).upper()]
        except KeyError:
            allowed = ", ".join(k for k in policy_class.short_keys() if k != "unknown")
            raise InvalidQosOverridesError(
                f"parameter '{parameter.name}' is {value!r}, which is no {name} policy; "
                f"use one of {allowed}") from None
    elif policy in _DURATION_POLICIES:
        value = Duration(nanoseconds=int(value))
    setattr(qos, name, value)


def _declare_qos_parameters(entity_type, node, topic_name, qos, options):
    """Declares (or reads) the override parameters ``options`` asks for on ``node``,
    applies them to ``qos`` (changed in place, as rclpy does) and validates the result
    with ``options.callback``."""
    kind = _entity_kind(entity_type)
    suffix = "" if options.entity_id is None else f"_{options.entity_id}"
    prefix = f"qos_overrides.{topic_name}.{kind}{suffix}."
    for policy in options.policy_kinds:
        if policy in (QoSPolicyKind.INVALID, QoSPolicyKind.AVOID_ROS_NAMESPACE_CONVENTIONS):
            continue
        if policy == QoSPolicyKind.LIFESPAN and kind == "subscription":
            continue
        name = prefix + policy.name.lower()
        descriptor = ParameterDescriptor(
            description=f"{policy.name.lower()} for {kind} `{topic_name}` "
                        f"with id `{options.entity_id}`",
            read_only=True)
        try:
            parameter = node.declare_parameter(name, _get_qos_policy_parameter(qos, policy),
                                               descriptor)
        except ParameterAlreadyDeclaredException:
            parameter = node.get_parameter(name)
        _override(qos, policy, parameter)
    if options.callback is not None:
        result = options.callback(qos)
        if not result.successful:
            raise InvalidQosOverridesError(
                f"the QoS overrides of {kind} `{topic_name}` with id `{options.entity_id}` "
                f"are not valid: {result.reason}")


def _apply(entity_type, node, topic, qos_profile, options):
    """The profile an entity is created with: ``qos_profile`` (a profile or a depth)
    with the overrides ``options`` asks for; ``qos_profile`` itself is not changed."""
    if options is None:
        return qos_profile
    if isinstance(qos_profile, QoSProfile):
        qos = copy.copy(qos_profile)
    else:
        qos = QoSProfile(depth=qos_profile)
    _declare_qos_parameters(entity_type, node, node.resolve_topic_name(topic), qos, options)
    return qos
