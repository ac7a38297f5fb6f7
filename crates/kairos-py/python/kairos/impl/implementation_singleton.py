"""``rclpy.impl.implementation_singleton.rclpy_implementation``: the few entry points of
rclpy's C binding that programs and tests call directly, answered by kairos."""

from kairos import exceptions as _exceptions
from kairos import qos as _qos
from kairos import utilities as _utilities
from kairos.impl import rcl_events as _rcl_events


class _PredefinedProfiles:
    """``rmw_qos_profile_t``: only ``predefined(name)``, the profile rclpy names so."""

    @staticmethod
    def predefined(name):
        profiles = {
            "qos_profile_default": _qos.QoSProfile(depth=10),
            "qos_profile_system_default": _qos.qos_profile_system_default,
            "qos_profile_sensor_data": _qos.qos_profile_sensor_data,
            "qos_profile_services_default": _qos.qos_profile_services_default,
            "qos_profile_parameters": _qos.qos_profile_parameters,
            "qos_profile_parameter_events": _qos.qos_profile_parameter_events,
            "qos_profile_rosout_default": _qos.qos_profile_rosout_default,
            "qos_profile_unknown": _qos.qos_profile_unknown,
        }
        try:
            return profiles[name].get_c_qos_profile()
        except KeyError:
            raise ValueError(f"no predefined QoS profile {name!r}; "
                             f"known: {', '.join(sorted(profiles))}") from None


class _Implementation:
    rmw_qos_profile_t = _PredefinedProfiles
    QoSCompatibility = _qos.QoSCompatibility
    RCLError = _exceptions.RCLError
    UnknownROSArgsError = _exceptions.UnknownROSArgsError
    RCLInvalidROSArgsError = _exceptions.RCLInvalidROSArgsError

    EventHandle = _rcl_events.EventHandle
    WaitSet = _rcl_events.WaitSet

    rclpy_get_rmw_implementation_identifier = staticmethod(
        _utilities.get_rmw_implementation_identifier)


rclpy_implementation = _Implementation()
