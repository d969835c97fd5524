from django.urls import path

from djproject import views

urlpatterns = [path("answer/", views.answer)]
