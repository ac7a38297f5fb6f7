"""rclpy's ``time_source``: the parameter that puts a node on simulation time (kairos
follows it in ``Node.set_parameters``)."""

USE_SIM_TIME_NAME = "use_sim_time"
