from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_account_pace_and_rest"),
    ]

    operations = [
        migrations.AddField(
            model_name="chat",
            name="username",
            field=models.CharField(blank=True, help_text="A person's @username, when they have one.", max_length=100),
        ),
        migrations.AlterField(
            model_name="chat",
            name="type",
            field=models.CharField(
                choices=[
                    ("channel", "Channel"),
                    ("supergroup", "Supergroup"),
                    ("group", "Group"),
                    ("user", "Person"),
                ],
                max_length=20,
            ),
        ),
    ]
