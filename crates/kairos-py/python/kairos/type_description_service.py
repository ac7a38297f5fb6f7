"""rclpy's ``type_description_service``: the name of the parameter that turns it on.
kairos does not serve ``~/get_type_description`` yet."""

START_TYPE_DESCRIPTION_SERVICE_PARAM = "start_type_description_service"
