"""The web app's image: Debian's nginx serving web/dist (Dockerfile stage ``web``)."""
